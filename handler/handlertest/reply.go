package handlertest

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// wantReply fails t unless m is an agent's message reply of parts text
// (partsText) in context contextID (a new one when ""), with no task.
func wantReply(t *testing.T, m *protocol.Message, contextID, text string) {
	t.Helper()
	if m == nil {
		t.Fatal("no message")
	}
	if m.Role != protocol.RoleAgent || m.TaskID != "" || !isUUID(m.ID) {
		t.Fatalf("message role %d, taskId %q, messageId %q: want an agent's, no task, a new uuid", m.Role, m.TaskID, m.ID)
	}
	if (contextID != "" && m.ContextID != contextID) || (contextID == "" && !isUUID(m.ContextID)) {
		t.Fatalf("contextId %q, want %q (a new uuid when empty)", m.ContextID, contextID)
	}
	if got := partsText(m.Parts); got != text {
		t.Fatalf("parts %q, want %q", got, text)
	}
}

// wantTasks fails t unless owner has n tasks.
func (e *env) wantTasks(t *testing.T, owner string, n int) {
	t.Helper()
	res, perr := e.c.ListTasks(e.ctx(), owner, &protocol.ListTasksParams{PageSize: 10})
	if perr != nil {
		t.Fatal(perr)
	}
	if len(res.Tasks) != n || res.TotalSize != n {
		t.Fatalf("%s lists %d tasks (total %d), want %d", owner, len(res.Tasks), res.TotalSize, n)
	}
}

// Message replies (Options.Reply ReplyMessage): a send answers one agent
// Message, blocking or not (A2A: returnImmediately does nothing for a
// Message): the main output's parts (text chunks merged, a data part in
// order), then a separate artifact's; the agent asked with no task, in
// the owner's id of the reply's context. A streaming send carries the
// one Message and ends. No task is stored.
func testMessageReply(t *testing.T, e *env) {
	e.agent.PlayAlways(Text("Hel"), Text("lo"), Status(protocol.StateWorking, "thinking"), data(`{"k":1}`), Text("!"), artifact("report", "r"))
	const parts = `Hello|{"k":1}|!|r`
	for _, tc := range []struct {
		name      string
		blocking  bool
		contextID string
	}{
		{"blocking", true, ""},
		{"non-blocking", false, ""},
		{"contextId kept", true, "ctx-9"},
	} {
		id := "m-" + tc.name
		t.Run(tc.name, func(t *testing.T) {
			m := userMessage(id, "hi")
			m.ContextID = tc.contextID
			ev, perr := e.c.Send(e.ctx(), alice, sendParams(m, tc.blocking))
			if perr != nil {
				t.Fatal(perr)
			}
			if ev.Task != nil {
				t.Fatalf("a Task %s", ev.Task.ID)
			}
			wantReply(t, ev.Message, tc.contextID, parts)
			req := e.agent.Request(t)
			if req.TaskID != "" || len(req.History) != 0 || req.User != alice || req.Message.ID != id ||
				req.ContextID != AgentContextID(e.key, alice, ev.Message.ContextID) {
				t.Fatalf("the agent was asked %+v", req)
			}
		})
	}
	got, sh := restClean(t, e.stream(alice, sendParams(userMessage("m-2", "hi"), true)))
	if sh != `message("Hello|{\"k\":1}|!|r")` {
		t.Fatalf("the stream: %s, want the one message", sh)
	}
	wantReply(t, got[0].Message, "", parts)
	e.wantTasks(t, alice, 0)
}

// Direct answers (Options.Reply ReplyAuto): a turn the agent marks as a
// message is answered with that Message, blocking, not, or streamed, and
// stores nothing; a turn it does not mark makes a task as ReplyTask does.
func testDirectAnswer(t *testing.T, e *env) {
	e.agent.Play(func(req *upstream.RunRequest) []Step {
		if partsText(req.Message.Parts) == "chat" {
			return []Step{messageMark, Text("hello "), Text("world")}
		}
		return []Step{Text("a task")}
	})
	chat := userMessage("m-1", "chat")
	chat.ContextID = "ctx-1"
	for _, blocking := range []bool{true, false} {
		ev, perr := e.c.Send(e.ctx(), alice, sendParams(chat, blocking))
		if perr != nil {
			t.Fatal(perr)
		}
		if ev.Task != nil {
			t.Fatalf("blocking %v: a Task %s", blocking, ev.Task.ID)
		}
		wantReply(t, ev.Message, "ctx-1", "hello world")
	}
	got, sh := restClean(t, e.stream(alice, sendParams(chat, true)))
	if sh != `message("hello world")` {
		t.Fatalf("the stream: %s, want the one message", sh)
	}
	wantReply(t, got[0].Message, "ctx-1", "hello world")
	e.wantTasks(t, alice, 0)

	task := e.sendTask(alice, sendParams(userMessage("m-2", "work"), true))
	if task.Status.State != protocol.StateCompleted || partsText(task.Artifacts[0].Parts) != "a task" {
		t.Fatalf("an unmarked turn answered %s %+v", task.Status.State, task.Artifacts)
	}
	e.wantTasks(t, alice, 1)
}
