package store

import "strconv"

// The event ids of this module's stores are the events' numbers in their
// task's log, from 1, in decimal: ordered within the task and the same
// on every replica that reads the log, so that a client resumes on any
// of them with Last-Event-ID. A store of another kind may give out ids
// of its own form.

// EventID is the id of event n of a task's log.
func EventID(n uint64) string { return strconv.FormatUint(n, 10) }

// EventNumber is the number of the event id names, 0 for "" (before the
// first event). Only the spelling EventID gives out is an id: decimal
// digits without a sign, a space or a leading zero, at most 2^63-1;
// anything else is ErrBadEventID.
func EventNumber(id string) (uint64, error) {
	if id == "" {
		return 0, nil
	}
	if id[0] < '0' || id[0] > '9' || (id[0] == '0' && len(id) > 1) {
		return 0, ErrBadEventID
	}
	n, err := strconv.ParseUint(id, 10, 63)
	if err != nil {
		return 0, ErrBadEventID
	}
	return n, nil
}
