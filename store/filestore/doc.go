// Package filestore is the store.Store of one Caddy process that keeps
// its tasks on disk (store.Notifier, store.Orphans and store.Secrets
// too): a bbolt database, dir/tasks.db, in which what a call reports as
// stored is committed and synced before the call returns, so that a
// kill -9 or a power cut loses nothing a caller was told of.
//
// # One process, one open
//
// bbolt locks the file (flock) for the process that opens it. Another
// process that opens it waits a second and fails with ErrLocked, whose
// message says to use `store redis` or `store postgres` for several
// replicas. Within the process the file is opened once (shared.go): the
// Stores of several scopes, and those of two configs during a reload
// that changed a setting, each hold a reference to the one open database,
// and the last Close closes it.
//
// # Buckets
//
// Each sharing scope (Options.Scope) has a top-level bucket "scope
// <scope>"; scopes never meet. Inside it (lp(s) is s after its length,
// so that a prefix scan of one name meets no other; numbers are 8 bytes
// big-endian, signed ones biased so that byte order is number order):
//
//	h  <id>                       header: owner, version, state, status
//	                              timestamp, context id, last write,
//	                              last event number, what the task is
//	                              charged (header.go)
//	t  <id>                       the snapshot (pack.EncodeTask)
//	e  lp(id) <n>                 event n of the log (pack.EncodeEvent)
//	o  lp(owner) <ts> <id>        the owner index, by status timestamp:
//	                              state, last write, context id
//	l  f|i <last write> <id>      finished and waiting tasks by last
//	                              write (expiry, eviction): the owner
//	l  r <id>                     running tasks: the owner
//	p  <id>                       push configs, in the order first put
//	c  lp(id) <key>               delivery claims
//	s  <name>                     secrets (the context id key)
//	m  bytes                      what the scope's tasks are charged
//
// # Writes
//
// Create and Update are one write each, applied in a transaction with
// the writes that arrived while the one before was committing (group.go:
// one commit, two fsyncs, for all of them; each sees the ones before
// it, and one that fails is taken out): the version
// compare-and-set, the snapshot, the events appended, the moves in the
// owner index and the lots, the bounds, the charge. The snapshot and the
// events are encoded before it, since bbolt has one writer at a time.
// Event ids are the events' numbers in the log in decimal, as the memory
// and Redis stores name them; the log is not compacted (as Redis's), so
// MaxEventsPerTask bounds it, but for the write that finishes a task.
//
// TTLs are applied at read: a task of the finished (waiting) lot whose
// last write is TTL (IdleTTL) ago is invisible, and the janitor deletes
// it (Sweep). A reload that changes ttl thus applies it to the tasks
// kept. bbolt reuses the pages freed by deletes, so the file grows to
// the high-water mark of what it held and stays there: it never shrinks,
// and needs no compaction to stay bounded (bbolt's compact command
// would give the space back to the disk offline). MaxBytes bounds what
// the tasks are charged (their records as encoded, plus overheads), not
// the file, which is larger by bbolt's pages and free space.
//
// Quota and eviction are the memory store's: over the owner's quota a
// Create evicts the owner's finished, then waiting, task whose status
// changed longest ago (store.ErrQuota when all run); over MaxBytes,
// finished tasks of any owner, oldest first, then the creator's waiting
// ones (store.ErrFull).
//
// # Waiting and cancels
//
// Only this process writes the file, so waiting is in-process: each open
// database has a hub of one channel per task (hub.go), which every Store
// on it shares. A write closes the channels of the tasks it appended to
// once it is committed; a waiter takes the channel, reads the log again,
// then waits, so no append between its read and its wait is missed. A
// cancel is a flag and a channel in the hub, since the run it stops is
// this process's.
//
// # Orphans
//
// When the file is opened, the tasks of the running lot were left
// running by a process that is gone: no run of this one has written
// them. Orphans hands each out (once per Lease, 2s, so the handler,
// which looks every half lease, records it failed about a second after
// start) until it is written or gone; its log stays readable, so its
// stream replays. Tasks this process creates or writes are never
// orphans.
package filestore
