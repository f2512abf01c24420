package handler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// ReplyMode says what a send answers with.
type ReplyMode int

// The reply modes.
const (
	// ReplyTask makes every send create or continue a Task that the store
	// keeps (the default).
	ReplyTask ReplyMode = iota
	// ReplyMessage makes a send run the agent to its end within the
	// request and answer with one Message; no task is created or stored.
	// It suits stateless agents: a reply cannot ask for more input.
	ReplyMessage
	// ReplyAuto lets the agent choose, turn by turn: a send that starts a
	// task waits for the agent's first event before anything is stored.
	// An answer marked as a direct message (upstream.EventMessage) is one
	// Message, as with ReplyMessage, and no task is stored; any other
	// answer makes the task, as with ReplyTask. A send that continues a
	// task is a task's turn, as with ReplyTask.
	ReplyAuto
)

// A message reply is built in memory, bounded as a task's run is: by
// Options.MaxRunEvents, MaxTaskOutput and MaxArtifacts, so an endless or
// huge agent stream is refused, not buffered.

// errReplyTooLarge: the agent produced more than a reply may hold.
var errReplyTooLarge = errors.New("handler: agent reply over a run limit")

// replyRun is a message reply's call of the agent: the request, and the
// caller's contextId that the reply carries (the agent is told the
// owner's own id for that context, as for a task).
type replyRun struct {
	req       *upstream.RunRequest
	contextID string
	owner     string
	// span is the request's trace span (nil: not traced).
	span trace.Span
	// claim is the send's claim, settled with the answer (nil: sends are
	// not deduplicated).
	claim *heldReply
}

// prepareReply validates a send in message mode and returns the request
// for the agent. A taskId names a task that cannot exist (none is ever
// created), so it is -32001 like any unknown task.
func (s *Service) prepareReply(ctx context.Context, c Caller, p *protocol.SendParams) (*replyRun, *protocol.Error) {
	if p.Push != nil {
		return nil, protocol.ErrPushNotSupported()
	}
	if perr := s.validateMessage(&p.Message); perr != nil {
		return nil, perr
	}
	if p.Message.TaskID != "" {
		return nil, protocol.ErrTaskNotFound(p.Message.TaskID)
	}
	if perr := s.needKey(ctx); perr != nil {
		return nil, perr
	}
	msg := p.Message
	if msg.ContextID == "" {
		msg.ContextID = newID()
	}
	return &replyRun{
		contextID: msg.ContextID,
		owner:     c.Owner,
		span:      c.Span,
		req: &upstream.RunRequest{
			ContextID:  s.agentContextID(c.Owner, msg.ContextID),
			Message:    msg,
			User:       c.Owner,
			Metadata:   p.Metadata,
			Extensions: c.Extensions,
			Headers:    c.Headers,
		},
	}, nil
}

// runReply calls the agent under ctx (the request's: a client that leaves
// aborts the call, and nothing runs on in the background, since there is
// no task to find the outcome by) and returns its answer as one agent
// Message. Failures are -32603 with an error id; the agent's own words
// about them go to the log only.
//
// The call is one of the owner's runs (MaxRunsPerOwner), like a task's.
func (s *Service) runReply(ctx context.Context, rr *replyRun) (answer *protocol.Message, perr *protocol.Error) {
	defer func() {
		if perr != nil {
			rr.claim.drop()
		} else {
			rr.claim.settle(answer, "")
		}
	}()
	if perr := s.reserveRun(Caller{Owner: rr.owner}); perr != nil {
		return nil, perr
	}
	defer s.opts.Runner.release(rr.owner)
	log := s.log.With(zap.String("context_id", rr.contextID))
	ctx, endTrace := traceRun(ctx, rr.span, rr.req, "", rr.contextID)
	outcome, obs := RunError, s.opts.Observer
	defer func() { endTrace(outcome) }()
	var started time.Time
	if obs != nil {
		obs.RunStarted()
		started = time.Now()
		defer func() { obs.RunEnded(time.Since(started), outcome) }()
	}
	stream, err := s.opts.Agent.Run(ctx, rr.req)
	if err != nil {
		outcome = outcomeOf(ctx, err)
		return nil, replyError(ctx, log, err)
	}
	// Only this goroutine touches the stream (see run.execute).
	defer stream.Close()
	in := interpreter{limits: &s.runLimits}
	msg, err := readReply(stream, &in, log, rr.contextID)
	if err != nil {
		outcome = outcomeOf(ctx, err)
		return nil, replyError(ctx, log, err)
	}
	outcome = RunOK
	return msg, nil
}

// readReply reads the rest of an agent's stream into one agent Message of
// context contextID, held to in's limits: a message reply's whole answer,
// or a direct answer after its marker (ReplyAuto).
func readReply(stream upstream.Stream, in *interpreter, log *zap.Logger, contextID string) (*protocol.Message, error) {
	b := replyBuilder{log: log}
	for {
		ev, err := stream.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		done, err := in.apply(&ev, &b)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	if b.state != protocol.StateUnspecified && b.state != protocol.StateCompleted {
		// The reply cannot carry the state: say in the log what the agent
		// meant, for the operator who chose message replies.
		log.Debug("a2a: agent ended a message reply in a non-completed state", zap.String("state", b.state.String()))
	}
	return &protocol.Message{
		ID:        newID(),
		ContextID: contextID,
		Role:      protocol.RoleAgent,
		Parts:     b.parts(),
	}, nil
}

// replyError logs why a reply failed under a fresh error id and returns
// -32603 naming it. A request that ended first (the client left) is not a
// fault worth more than a debug line; nobody reads its answer.
func replyError(ctx context.Context, log *zap.Logger, err error) *protocol.Error {
	if r, ok := errors.AsType[*upstream.Refusal](err); ok {
		return refusalError(log, "", r)
	}
	if ctx.Err() != nil {
		id := newErrorID()
		log.Debug("a2a: message reply abandoned, the request ended", zap.String("error_id", id), zap.Error(err))
		return protocol.ErrInternal(id)
	}
	return internalError(log, "agent reply", err)
}

// agentFailed is an agent that ended its run failed: its words go to the
// log only, like every other agent failure.
type agentFailed struct {
	detail string
	text   string
}

func (f *agentFailed) Error() string {
	return fmt.Sprintf("agent ended the run failed (detail %q, message %q)", f.detail, f.text)
}

// replyBuilder is the output (interpret.go) of a message reply: it
// gathers an agent's events into the parts of one Message: the main
// output (text chunks merged, as in a task's main artifact), then the
// parts of separate artifacts, then the final status message.
type replyBuilder struct {
	main, artifactParts, status []protocol.Part
	// text holds the text of the last main part while chunks are merged
	// into it (merging): appending to a Builder keeps the merge linear,
	// where += on the part would copy the whole text for every chunk.
	text    strings.Builder
	merging bool
	// state is the final state the agent named (unspecified: none, the
	// stream just ended).
	state protocol.TaskState
	// nArtifacts counts the separate artifacts (max_artifacts).
	nArtifacts int
	// chunkIDs are the agent artifact ids whose pieces have come.
	chunkIDs map[string]bool
	log      *zap.Logger
}

func (b *replyBuilder) mainText(text string, _ bool) error {
	if !b.merging {
		if n := len(b.main); n > 0 && plainText(&b.main[n-1]) {
			b.text.WriteString(b.main[n-1].Text)
		} else {
			b.main = append(b.main, protocol.Part{Kind: protocol.PartText})
		}
		b.merging = true
	}
	b.text.WriteString(text)
	return nil
}

func (b *replyBuilder) mainParts(parts []protocol.Part, _ bool) error {
	b.endText()
	b.main = append(b.main, parts...)
	return nil
}

func (b *replyBuilder) artifact(a *protocol.Artifact) error {
	b.nArtifacts++
	b.artifactParts = append(b.artifactParts, a.Parts...)
	return nil
}

// progress: notes are transient, as in a task's status, and not part of
// the answer.
// chunk gathers an agent artifact's pieces like whole artifacts: a
// message has no artifacts to replace, so a piece without append adds
// its parts too.
func (b *replyBuilder) chunk(a *protocol.Artifact, _, _ bool) error {
	if !b.hasChunk(a.ID) {
		if b.chunkIDs == nil {
			b.chunkIDs = map[string]bool{}
		}
		b.chunkIDs[a.ID] = true
		b.nArtifacts++
	}
	b.artifactParts = append(b.artifactParts, a.Parts...)
	return nil
}

func (b *replyBuilder) hasChunk(id string) bool { return b.chunkIDs[id] }

// ref is dropped: a message reply keeps no task to hold it.
func (b *replyBuilder) ref(string) error { return nil }

// direct: a reply is a message already, so the marker changes nothing.
func (b *replyBuilder) direct() (bool, error) { return false, nil }

func (b *replyBuilder) progress([]protocol.Part) error { return nil }

// end takes the outcome: a failed agent is an error (A2A has no failed
// Message); any other state's words end the reply.
func (b *replyBuilder) end(state protocol.TaskState, parts []protocol.Part, detail string) error {
	if state == protocol.StateFailed {
		return &agentFailed{detail: detail, text: partsText(parts)}
	}
	b.state = state
	b.status = append(b.status, parts...)
	return nil
}

func (b *replyBuilder) overLimit(limit string, max int) error {
	return fmt.Errorf("%w (%s %d)", errReplyTooLarge, limit, max)
}

// artifacts counts the separate artifacts: the main output is the
// Message's own parts, not an artifact.
func (b *replyBuilder) artifacts(main bool) (int, bool) {
	if main {
		return b.nArtifacts, false
	}
	return b.nArtifacts + 1, true
}

func (b *replyBuilder) logger() *zap.Logger {
	if b.log == nil {
		return zap.NewNop()
	}
	return b.log
}

// endText puts the merged text into the last main part.
func (b *replyBuilder) endText() {
	if b.merging {
		b.main[len(b.main)-1].Text = b.text.String()
		b.text.Reset()
		b.merging = false
	}
}

// parts is the reply's content. A Message needs at least one part, so an
// agent that said nothing answers one empty text part.
func (b *replyBuilder) parts() []protocol.Part {
	b.endText()
	ps := make([]protocol.Part, 0, len(b.main)+len(b.artifactParts)+len(b.status))
	ps = append(ps, b.main...)
	ps = append(ps, b.artifactParts...)
	ps = append(ps, b.status...)
	if len(ps) == 0 {
		ps = append(ps, protocol.Part{Kind: protocol.PartText})
	}
	return ps
}

// partsText joins the text of parts, for a log line.
func partsText(ps []protocol.Part) string {
	var b strings.Builder
	for i := range ps {
		b.WriteString(ps[i].Text)
	}
	return b.String()
}

// sendReply answers a non-streaming send in message mode. Blocking or not
// makes no difference: returnImmediately has no effect on Message replies
// (A2A 1.0 §3.2), and there is no task to return at once.
func (s *Service) sendReply(ctx context.Context, c Caller, p *protocol.SendParams) (protocol.Event, *protocol.Error) {
	rr, perr := s.prepareReply(ctx, c, p)
	if perr != nil {
		return protocol.Event{}, perr
	}
	held, r, perr := s.claimReply(ctx, c, p)
	if perr != nil {
		return protocol.Event{}, perr
	}
	if r != nil {
		return s.answerRetried(ctx, c, p, r)
	}
	rr.claim = held
	msg, perr := s.runReply(ctx, rr)
	return protocol.Event{Message: msg}, perr
}

// replyResult is what the agent call of a streamed reply ended with.
type replyResult struct {
	msg  *protocol.Message
	perr *protocol.Error
}

// streamReply serves a streaming send in message mode: the stream opens
// at once, carries heartbeats while the agent works, then exactly one
// frame (the Message, or the error) and closes. The frame has no resume
// id: there is no task log to resume from.
func (s *Service) streamReply(ctx context.Context, w EventWriter, rr *replyRun) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w.Open() != nil {
		return
	}
	var r replyResult
	done := make(chan struct{})
	go func() {
		r.msg, r.perr = s.runReply(ctx, rr)
		close(done)
	}()
	s.serveAnswer(w, done, func() (*protocol.Message, *protocol.Error) { return r.msg, r.perr }, func() {
		// Wait for the call too, so no goroutine outlives the request.
		cancel()
		<-done
	})
}

// serveAnswer writes heartbeats on an open stream until done, then the
// one Message answer (or its error) and flushes. A client that goes away
// meanwhile gets abort called (the agent call is of no use any more).
func (s *Service) serveAnswer(w EventWriter, done <-chan struct{}, answer func() (*protocol.Message, *protocol.Error), abort func()) {
	tick := time.NewTicker(s.opts.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-done:
			msg, perr := answer()
			if perr != nil {
				w.Fail(perr)
				return
			}
			if w.Queue("", &protocol.Event{Message: msg}) == nil {
				_ = w.Flush()
			}
			return
		case <-tick.C:
			if w.Heartbeat() != nil {
				abort()
				return
			}
		}
	}
}
