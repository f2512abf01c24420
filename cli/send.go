package cli

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// SendOptions are the settings of one send.
type SendOptions struct {
	// Stream sends with SendStreamingMessage and prints the answer as
	// it arrives: the artifacts' text run on, each status change on a
	// line of its own.
	Stream bool
	// Events streams too, and prints each event on a line of its own
	// instead, an artifact's chunks named by the artifact.
	Events bool
	// TaskID continues a task (one waiting for input); ContextID puts
	// the message in a conversation.
	TaskID, ContextID string
	// Continue is how the command is spelled when it says how to
	// continue a task that waits for input ("caddy a2a send <url>").
	Continue string
}

// outcome follows a task through the events of one call.
type outcome struct {
	taskID, contextID string
	state             a2a.TaskState
	status            string // the last status message's text
	message           bool   // the agent answered with a message
	artifacts         []*a2a.Artifact
}

func (r *outcome) see(ev a2a.Event) {
	switch e := ev.(type) {
	case *a2a.Task:
		r.taskID, r.contextID, r.state = string(e.ID), e.ContextID, e.Status.State
		r.status = messageText(e.Status.Message)
		r.artifacts = e.Artifacts
	case *a2a.TaskStatusUpdateEvent:
		r.taskID, r.contextID, r.state = string(e.TaskID), e.ContextID, e.Status.State
		r.status = messageText(e.Status.Message)
	case *a2a.Message:
		r.message = true
	}
}

// exit is the exit code for the task's last state, with a line to Err
// for anything but a completed task: how to continue one that waits,
// why one ended otherwise.
func (r *outcome) exit(o *Options, so SendOptions) int {
	switch {
	case r.message || r.state == a2a.TaskStateCompleted:
		return ExitOK
	case r.state == a2a.TaskStateInputRequired || r.state == a2a.TaskStateAuthRequired:
		o.errorf("task %s is %s; continue it with: %s%s --task %s <text>\n", r.taskID, stateName(r.state), so.Continue, o.givenFlags(), r.taskID)
		return ExitNeedsInput
	case r.state.Terminal():
		o.errorf("task %s %s%s\n", r.taskID, stateName(r.state), suffix(r.status))
		return ExitFailed
	case r.taskID == "":
		o.errorf("the agent sent no task and no message\n")
		return ExitFailed
	}
	o.errorf("task %s is still %s (the stream ended before the task did)\n", r.taskID, stateName(r.state))
	return ExitFailed
}

// Send sends text to the agent at given and prints the answer: the
// artifacts' text or the agent's message (a task's status message when
// it waits for input), or with Stream the text as it arrives and the
// status changes, with Events each event on a line; with JSON the raw
// response frames instead. The exit code
// says how the task ended (ExitOK, ExitNeedsInput, ExitFailed).
func Send(ctx context.Context, o *Options, given, text string, so SendOptions) int {
	c, w, err := dial(ctx, o, given)
	if err != nil {
		return commandFailed(o, "send", err)
	}
	defer c.Destroy()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.TaskID, msg.ContextID = a2a.TaskID(so.TaskID), so.ContextID
	req := &a2a.SendMessageRequest{Message: msg}
	var r outcome
	if so.Stream || so.Events {
		view := &streamView{o: o}
		for ev, err := range c.SendStreamingMessage(ctx, req) {
			if err != nil {
				view.end()
				return callFailed(o, w, err)
			}
			r.see(ev)
			switch {
			case o.JSON:
			case so.Events:
				printEvent(o, ev)
			default:
				view.event(ev)
			}
		}
		view.end()
		return r.exit(o, so)
	}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		return callFailed(o, w, err)
	}
	r.see(res)
	if !o.JSON {
		printResult(o, res)
	}
	return r.exit(o, so)
}

// printResult is a blocking send's answer: the message's text, or the
// task's artifacts (each on its own, named when there are several) and,
// when it waits or ended otherwise, its status message.
func printResult(o *Options, res a2a.SendMessageResult) {
	switch e := res.(type) {
	case *a2a.Message:
		o.printf("%s\n", text(partsText(e.Parts)))
	case *a2a.Task:
		for _, a := range e.Artifacts {
			if len(e.Artifacts) > 1 {
				o.printf("[%s]\n", artifactName(a))
			}
			o.printf("%s\n", text(partsText(a.Parts)))
		}
		if e.Status.State != a2a.TaskStateCompleted {
			if t := messageText(e.Status.Message); t != "" {
				o.printf("%s\n", text(t))
			}
		}
	}
}

// callFailed prints why a call failed, with the exact code the server
// sent when its answer was an A2A error (read from the frame: a2a-go
// keeps the kind of error, not the code), or the bound an answer
// outgrew (a2a-go wraps it in words of its own), and is ExitFailed.
func callFailed(o *Options, w *wire, err error) int {
	if over := w.bound(); over != nil {
		o.errorf("error: %v\n", over)
		return ExitFailed
	}
	if code, msg, ok := wireError(w.last()); ok {
		o.errorf("error %s: %s\n", code, msg)
		return ExitFailed
	}
	if status, _ := w.answer(); status == http.StatusUnauthorized || status == http.StatusForbidden {
		o.errorf("HTTP %d %s: the server wants credentials (--user name:password or -H 'Authorization: …')\n", status, http.StatusText(status))
		return ExitFailed
	}
	o.errorf("error: %v\n", err)
	return ExitFailed
}

// wireError reads the error of a JSON-RPC response ({"error": {"code",
// "message"}}) or of an HTTP+JSON one (the same member, a google.rpc
// Status with its status name; 0.3's flat {"code", "message"} too).
func wireError(frame []byte) (code, msg string, ok bool) {
	type status struct {
		Code    *json.Number `json:"code"`
		Message string       `json:"message"`
		Status  string       `json:"status"`
	}
	var doc struct {
		Error *status `json:"error"`
		status
	}
	if len(frame) == 0 || json.Unmarshal(frame, &doc) != nil {
		return "", "", false
	}
	e := doc.Error
	if e == nil {
		e = &doc.status
	}
	if e.Code == nil {
		return "", "", false
	}
	code = e.Code.String()
	if e.Status != "" {
		code += " " + e.Status
	}
	return code, e.Message, true
}

// commandFailed prints an error that came before any call (flags, the
// card, the connection) and is ExitFailed.
func commandFailed(o *Options, cmd string, err error) int {
	o.errorf("caddy a2a %s: %v\n", cmd, err)
	return ExitFailed
}
