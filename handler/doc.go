// Package handler is the A2A service over the neutral model: the task
// state machine, multi-turn rules, history trimming, owner checks, event
// fan-out to streams, cancel, extension negotiation and the Agent Card's
// HTTP answer. Its API (Service) is binding-neutral: typed params in, typed
// results or a *protocol.Error out, and a Stream for the streaming calls
// that a binding drives with its own EventWriter. The bindings
// (binding/jsonrpc, binding/rest, binding/grpcbind) only build params,
// call through binding/call's method table and frame the answers; each
// runs the behaviour suite handler/handlertest over its own wire. It never
// imports Caddy: the Caddy module hands the binding the caller identity,
// the body already read under a limit, and a context that ends when the
// config is unloaded. Backend is what outlives a config: a store with its
// runner, context key and push dispatcher.
//
// Choices the specification leaves open, made here once for both versions
// and every binding:
//
//   - A PascalCase (1.0) method without A2A-Version is -32009, as in
//     a2a-python: an absent header means 0.3. The message names the header
//     to send, and the error is encoded as 1.0 because the caller is a 1.0
//     client that forgot it.
//   - A message to a task that is still submitted or working is -32004,
//     like one to a terminal task: only interrupted tasks (input-required,
//     auth-required) take a new turn, so two runs never write one task.
//   - A send's stream closes after a terminal or input-required status;
//     auth-required keeps it open (credentials arrive out of band, A2A 1.0
//     §7.6.1). A subscription (SubscribeToTask, tasks/resubscribe) closes
//     at a terminal status only (A2A 1.0 §3.1.6): one to a task that waits
//     for input gets the Task, then the turn that continues it.
//   - A cancel is recorded by the cancel request itself, then signalled to
//     the run, so its answer is always the canceled task.
//   - ListTasks for an anonymous caller is an empty list: anonymous callers
//     share the owner "" and must not see each other's tasks.
//   - Every stream event is also stored, so a resubscribe replays exactly
//     what a live stream carried; a Last-Event-ID that is not a position
//     before the current snapshot is ignored (the stream tails from the
//     snapshot) rather than replaying nothing forever.
//   - Extensions: A2A-Extensions and X-A2A-Extensions are both read for
//     every method, and the activated URIs (requested ∩ declared, in the
//     order requested) are echoed under the header name(s) the client used.
//     A required extension not activated refuses every method but the
//     extended card (discovery) with -32008; in 0.3, whose spec only asks
//     for "an appropriate error", it is the same code, the URIs named in the
//     message (0.3 errors carry no data: its clients disagree on the type).
//   - Limits (parts, text, inline file and metadata sizes, JSON depth) are
//     checked while decoding, before any store access: a refused request
//     creates and changes nothing. The error is -32602 (-32600 for depth)
//     naming the limit, with its name and value in the error metadata.
//   - Message replies (Options.Reply = ReplyMessage) are for stateless
//     agents. A send runs the agent within the request and answers one
//     agent Message (new messageId, the request's contextId or a new one,
//     no taskId); no task is created, so GetTask, ListTasks, CancelTask and
//     subscribe find nothing, and a message naming a taskId is -32001. The
//     parts are the main output (text chunks merged, data and file parts
//     in order), then the parts of separate artifacts, then the final
//     status message: an agent ending input-required, auth-required or
//     rejected answers just its words, since there is no task to continue.
//     An agent that said nothing answers one empty text part (a Message
//     needs one). returnImmediately / blocking:false are ignored: A2A says
//     they do nothing for Message replies. A streaming send opens at once,
//     carries heartbeats while the agent works, then exactly one frame (no
//     SSE id: there is no log to resume) and closes.
//   - Direct answers (Options.Reply = ReplyAuto) let the agent choose, turn
//     by turn: a turn that starts a task has its task created by the run,
//     once the agent's first event shows what the turn is; an answer the
//     agent marks as a message (upstream.EventMessage) is one Message, as
//     a message reply's, and nothing is stored. The wait for that first
//     event is the cost: a non-blocking or streaming send answers once the
//     agent has begun answering. A turn that continues a task is a task's
//     turn: a marked answer there fails the task.
//   - Every SSE frame (heartbeats included) must be written within
//     Options.WriteTimeout (30s) of its start, or the stream ends: a client
//     that stops reading does not pin a stream. A config unload ends open
//     streams, cutting one blocked in a write at once; the runs go on.
//   - A message reply is bound to its request: the client leaving aborts
//     the agent call (nothing runs on with no task to find it by). A config
//     unload does not cut it: like a proxied request, it finishes on the
//     old server, bounded by the upstream timeout (and a streamed reply's
//     frames by WriteTimeout).
//   - A message reply whose agent fails (a failed status or {"error"},
//     a broken or oversized stream, non-2xx, timeout, refused connection)
//     is -32603 with an error id; the agent's words go to the log only.
//     A2A has no failed Message, and -32006 (invalid agent response) would
//     fit only some of these causes; the A2A SDKs answer a failed
//     message-only executor with -32603 too.
//   - Internal errors are -32603 "Internal error" with a 16-hex-digit
//     error id (1.0: ErrorInfo metadata errorId; 0.3: in the message) that
//     the log line with the underlying error also carries; no Go error,
//     agent or store text ever reaches a caller.
package handler
