// Package pgstore is the store.Store (and store.Notifier, Secrets,
// Handoffs, Orphans, Abandoner, PushHints) shared by several servers
// through one PostgreSQL database: any replica with the same DSN, schema
// and share sees every task, reads and tails every event log with the
// same event ids, and can cancel a task another replica runs. Unlike
// Redis it keeps what it acknowledged through a crash of the server (a
// committed transaction is in the WAL; synchronous_commit is left on).
//
// # Tables
//
// Everything lives in one schema (Options.Schema, default a2a, made if
// missing), whose name is checked as an identifier and quoted in every
// statement. Every row carries its sharing scope (Options.Share, or ""
// for the schema's default scope) as the first column of its primary key,
// so two shares in one schema never meet:
//
//	tasks         (scope, id): owner, version, snap (the snapshot, pack's
//	              record), state, kind (0 running, 1 interrupted, 2
//	              finished), ts (status timestamp, unix ns), context_id,
//	              n (events in the log), expires (NULL: never), cancelled,
//	              push_seq (order counter of push configs), lease (NULL:
//	              not running)
//	events        (scope, task_id, seq): data, event seq of the log (from 1)
//	push_configs  (scope, task_id, config_id): ord (first put), data
//	claims        (scope, task_id, key)
//	secrets       (scope, name): value
//	handoffs      (scope, kind, seq): data, expires
//	schema_version (version)
//
// events, push_configs and claims reference their task ON DELETE
// CASCADE: a task dropped (evicted, swept) takes them along. The owner
// index (scope, owner, ts DESC, id DESC) INCLUDE (state, context_id,
// expires) serves List: the count of matches and the page after the
// cursor are index scans, newest status timestamp first, ties by id
// descending (ids are COLLATE "C": byte order, as the other stores). The
// page token is the last returned task's (ts, id).
//
// # Writes
//
// Create and Update are one call of the schema's write function
// (write.go): one round trip, one transaction, so the version
// compare-and-set (the row locked FOR NO KEY UPDATE), the snapshot, the
// events, the bound on events per task (the write that finishes a task
// always goes in), the owner quota (under the owner's advisory lock: the
// owner's finished, then interrupted, task whose status changed longest
// ago makes room, else ErrQuota) and the lease all happen or none does.
// A finished task expires TTL after its last write, an interrupted one
// IdleTTL after, a running one never: an expired row is invisible to
// every read from its deadline on, and a sweep every 30 s deletes it.
//
// Event ids are the events' numbers in the log, in decimal (as the
// memory and Redis stores'): the same on every replica, so a client can
// resume on another replica with Last-Event-ID.
//
// A process sends its writes in groups (group.go): one that finds none
// on its way goes at once; those that arrive meanwhile share the next
// round trip and commit, a pipeline the server runs as one transaction,
// each call seeing the ones before it.
//
// # Waiting
//
// A write that appends notifies the scope's channel (a digest of schema
// and share) with "e<last> <id>", at its commit; SignalCancel sets the
// row's cancelled flag and notifies "c <id>" in one statement. Each Store
// holds one connection that LISTENs on the channel and fans each
// notification out in-process by closing the task's one Go channel,
// which every waiter of the process shares (Events with wait,
// EventsReady, CancelSignal). A wait takes its channel before it reads,
// so no append between the read and the wait is missed; a cancel watch
// is taken before the flag is read. Every 30 s every waiter is woken
// once (a stream whose task expired finds out). When the connection
// drops every waiter wakes (and reads the error); it reconnects by
// itself, LISTENs again, wakes them again (what was notified meanwhile
// is lost) and re-reads the flags of the watched cancels. The listener
// pings an idle connection every 15 s, so a silent network failure is
// found too. A chunk reaches a stream on another replica in about
// 0.4 ms (p99 0.9-1.3 ms) on one machine: BenchmarkCrossReplicaChunk.
//
// # Leases
//
// The write that makes a task running sets its lease to the server's
// now() + Lease, the one that settles it clears it; each process renews
// the leases of the tasks it runs every third of Lease. Orphans claims
// the running tasks whose lease is past by moving the lease a Lease
// ahead, FOR UPDATE SKIP LOCKED, so each has one claimant, and a claim
// lapses like a lease. Every time is the server's clock.
//
// # Migrations
//
// The schema carries its version. At start (or at the first operation
// once the server answers) a store takes the schema's advisory lock,
// creates the schema if missing and runs the steps it lacks, in one
// transaction: ten replicas starting together migrate once. A schema of
// a later version is refused (VersionError), naming both versions.
//
// # Failures
//
// Every statement, and the dial, is bounded by Options.Timeout: a dead
// or hung server is an error, never a hang. A server down at New is no
// error: operations fail until it answers, then the store migrates and
// works. An error names the server by its DSN without the password
// (RedactDSN). A write whose reply was lost may have been applied: its
// retry then gets store.ErrConflict, as after any lost race.
//
// # Limits
//
// A waiting stream reads the events it was woken for (store.Tailer is
// not offered): 100 streams of one task make 100 reads per chunk. There
// is no bound on tasks or bytes across owners: that is the database's
// disk.
package pgstore
