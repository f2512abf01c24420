// Package redisstore is the store.Store (and store.Notifier) shared by
// several servers through one Redis: any replica with the same URL and key
// prefix sees every task, reads and tails every event log with the same
// event ids, and can cancel a task another replica runs.
//
// # Keys
//
// A store's sharing scope is its prefix and its share (Options.Share):
// below, <prefix> stands for the prefix alone when there is no share
// (the keys of stores made before shares), and for <prefix>{<share>}
// when there is, in every key, channel and secret. A prefix holds no
// brace, so no two scopes' keys meet on one server (keys.go, scopeBase).
//
// Every key of a scope is under the hash tag {<prefix>}, so that all of
// them share one Redis Cluster slot and one script writes a task, its
// owner's index and its lease together, on a Cluster (Options.Cluster) as
// on one server; one scope lives on one shard. Task <id>:
//
//	{<prefix>}t:<id>:h  hash: o owner, v version, s snapshot (codec.go),
//	                    st state, ix the task's owner index member, n
//	                    events in the log, e<k> event k of the log (from
//	                    1, the encoded event), x cancelled, ps the push
//	                    configs' order counter (set once one was put), cl
//	                    set once a delivery was claimed
//	{<prefix>}t:<id>:p  hash: push configs, d:<cfg> data, o:<cfg> order
//	{<prefix>}t:<id>:c  set: delivery claims
//
// Each owner but the anonymous one has an index (List never lists the
// anonymous owner's tasks, so they are not indexed):
//
//	{<prefix>}o:<owner>:ix  sorted set, every score 0, so ordered by member
//	                        bytes: 16 hex digits of the status timestamp,
//	                        the task id, NUL, state, NUL, context id
//	{<prefix>}o:<owner>:dl  sorted set of the same members scored by the
//	                        time (ms) their task expires
//
// and the prefix has {<prefix>}runs (the leases, lease.go; an orphan
// pass claims a lapsed one by moving its score, so a claimant whose write
// fails loses nothing), {<prefix>}secret:<name> (Secret) and
// {<prefix>}handoff:<kind> (handoff.go).
//
// List walks the index from the top (newest status timestamp first, ties
// by id descending), filtering on the state and context in the members,
// counting TotalSize over every match; the page token is the last
// returned member's (timestamp, id), so a page continues strictly after
// it on any replica. Members of expired tasks leave the index by a range
// of the deadline set at every write and List of the owner.
//
// # Writes
//
// Create and Update are one Lua script (scripts.go): the version
// compare-and-set, the snapshot and the events (one HSET), the move in the
// owner index, the bound on events per task (the write that finishes a
// task always goes in), the owner quota (Create drops the owner's
// finished, then interrupted, task whose status changed longest ago) and
// the expiry: a finished task's keys expire TTL after its last write, an
// interrupted one's IdleTTL after, a running one's never. Redis expires
// them by itself; nothing sweeps.
//
// Event ids are the events' numbers in the log, in decimal (as the memory
// store's): ordered, the same on every replica, so a client can resume on
// another replica with Last-Event-ID. Events(after) is one HMGET of the
// fields after it; an id not of that form is store.ErrBadEventID.
//
// # Waiting
//
// A write that appends publishes to <prefix>e:<id> (but the one that
// creates a task: nobody can be waiting on it); SignalCancel marks the
// hash and publishes to <prefix>c:<id>. Each Store holds one pub/sub
// connection, subscribes a task's event channel when someone in the
// process first waits on it, hears every cancel of the prefix through one
// pattern subscription, and fans each message out in-process by closing
// the task's one Go channel, which every waiter shares (Events with wait,
// EventsReady, CancelSignal). A wait subscribes before its second read, so
// no append between the read and the wait is missed. Every 30 s every
// waiter is woken once (so a stream whose task expired finds out), the
// cancel watches of tasks that are gone are forgotten, and the
// subscriptions nobody used since are dropped. When the connection drops
// all waiters wake (and read the error); it reconnects by itself,
// resubscribes, wakes them again and re-checks the cancel watches.
//
// # Failures
//
// Every operation's round trips are bounded by Options.Timeout; an error
// of Redis names the server by its URL without the password. A write
// whose reply was lost may have been applied: its retry then gets
// store.ErrConflict, as after any lost race.
//
// # Limits
//
// The log is not compacted when a task resumes (the memory store merges
// the chunks of earlier turns, store.Compact): stream entries cannot be
// rewritten in place, so MaxEventsPerTask bounds the log instead. There
// is no bound on tasks or bytes across owners: that is Redis' maxmemory.
package redisstore
