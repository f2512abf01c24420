package push

import (
	"net/url"
	"strings"
)

// fair is the dispatcher's share-keeping, under its mutex: the owners
// with a task ready take turns at the workers, each holding at most
// OwnerWorkers of them, and each receiver host takes at most HostWorkers
// deliveries at once (a task whose next delivery would pass that waits
// on the host, without a worker).
type fair struct {
	owners map[string]*ownerState
	hosts  map[string]*hostState
	// turns are the owners with a task ready and a worker to spare, in
	// the order they get the next free worker.
	turns []*ownerState
}

// ownerState is one owner's share: workers held, notices queued, tasks
// ready.
type ownerState struct {
	name            string
	running, queued int
	ready           []*taskQueue
	inTurns         bool
}

// hostState is one receiver host's share: deliveries under way, notices
// of the tasks that count against it, tasks waiting for a slot.
type hostState struct {
	running, queued int
	parked          []*taskQueue
}

// hostKey is the receiver host of a webhook URL: its host name, any
// port, lowercased (one machine is one share).
func hostKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}

func (d *Dispatcher) ownerQueued(name string) int {
	if o := d.owners[name]; o != nil {
		return o.queued
	}
	return 0
}

// owner is name's share, made on first use.
func (d *Dispatcher) owner(name string) *ownerState {
	o := d.owners[name]
	if o == nil {
		o = &ownerState{name: name}
		d.owners[name] = o
	}
	return o
}

// makeReady puts q at the end of its owner's ready tasks and wakes a
// worker.
func (d *Dispatcher) makeReady(q *taskQueue) {
	o := q.owner
	o.ready = append(o.ready, q)
	d.schedule(o)
	d.ready.Signal()
}

// schedule gives o a turn if it has a task ready and a worker to spare.
func (d *Dispatcher) schedule(o *ownerState) {
	if !o.inTurns && len(o.ready) > 0 && o.running < d.opts.OwnerWorkers {
		o.inTurns = true
		d.turns = append(d.turns, o)
	}
}

// next takes the ready task of the owner whose turn it is (nil: none),
// holding a worker for it; the owner's next turn comes after the others'.
func (d *Dispatcher) next() *taskQueue {
	for len(d.turns) > 0 {
		o := d.turns[0]
		d.turns[0] = nil
		d.turns = d.turns[1:]
		o.inTurns = false
		if len(o.ready) == 0 || o.running >= d.opts.OwnerWorkers {
			continue
		}
		q := o.ready[0]
		o.ready[0] = nil
		o.ready = o.ready[1:]
		o.running++
		d.schedule(o)
		return q
	}
	return nil
}

// done lets q's worker go after a notice: q waits for its next turn, or
// goes if it is empty.
func (d *Dispatcher) done(q *taskQueue) {
	o := q.owner
	if len(q.notices) > 0 {
		o.ready = append(o.ready, q)
	} else {
		delete(d.tasks, q.id)
		if h := q.host; h != "" {
			q.host = ""
			d.forgetHost(h)
		}
	}
	d.leaveOwner(o)
}

// leaveOwner gives back one of o's workers.
func (d *Dispatcher) leaveOwner(o *ownerState) {
	o.running--
	d.schedule(o)
	d.ready.Signal()
	if o.running == 0 && o.queued == 0 && len(o.ready) == 0 && !o.inTurns {
		delete(d.owners, o.name)
	}
}

// takeHost counts q against host and takes a slot there for its next
// delivery; false: the host is at its bound, q waits on it and its
// worker goes (leaveHost hands it the next free slot).
func (d *Dispatcher) takeHost(q *taskQueue, host string) bool {
	h := d.hosts[host]
	if h == nil {
		h = &hostState{}
		d.hosts[host] = h
	}
	if q.host != host {
		if q.host != "" {
			d.hosts[q.host].queued -= q.count()
			d.forgetHost(q.host)
		}
		q.host = host
		h.queued += q.count()
	}
	if q.slot {
		q.slot = false
		return true
	}
	if h.running >= d.opts.HostWorkers {
		h.parked = append(h.parked, q)
		d.leaveOwner(q.owner)
		return false
	}
	h.running++
	return true
}

// leaveHost gives back a slot at host: to the first task waiting there
// (which then waits for its owner's turn), else to anyone.
func (d *Dispatcher) leaveHost(host string) {
	h := d.hosts[host]
	if len(h.parked) > 0 {
		q := h.parked[0]
		h.parked[0] = nil
		h.parked = h.parked[1:]
		q.slot = true
		d.makeReady(q)
		return
	}
	h.running--
	d.forgetHost(host)
}

// forgetHost drops host's share once nothing counts against it.
func (d *Dispatcher) forgetHost(host string) {
	if h := d.hosts[host]; h != nil && h.running == 0 && h.queued == 0 && len(h.parked) == 0 {
		delete(d.hosts, host)
	}
}
