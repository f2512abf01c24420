package jsonrpc

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// capture is a stored snapshot and its encoding when it was read.
type capture struct {
	what string
	task *protocol.Task
	json string
}

func snapshotJSON(t *testing.T, task *protocol.Task) string {
	t.Helper()
	b, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStoredSnapshotsNeverChange: the store shares the tasks it holds
// with every reader (store.Store), so the handler must copy on write.
// Every snapshot read along a two-turn conversation — text chunks merged
// into one part, a data part appended, a separate artifact, an agent
// question, a continuation and a cancel — must still encode to the same
// bytes at the end.
func TestStoredSnapshotsNeverChange(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	var caps []capture
	snap := func(what, id string) {
		t.Helper()
		rec, err := h.store.Get(context.Background(), "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		caps = append(caps, capture{what, rec.Task, snapshotJSON(t, rec.Task)})
	}
	lastEvents := func(id string) int {
		evs, err := h.store.Events(context.Background(), id, "", false)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}

	respc := make(chan map[string]any, 1)
	go func() {
		respc <- h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")})
	}()
	run := agent.Next(t)
	id := run.Req.TaskID
	waitFor(t, "working", func() bool { return lastEvents(id) == 2 })
	snap("working", id)
	steps := []struct {
		what string
		s    step
	}{
		{"first chunk", text("Hel")},
		{"merged chunk", text("lo")},
		{"data part", step{Event: upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartData, Data: []byte(`{"k":1}`)}}}}},
		{"text after data", text("!")},
		{"separate artifact", step{Event: upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{Name: "r", Parts: []protocol.Part{{Kind: protocol.PartText, Text: "r"}}}}}},
	}
	for i, st := range steps {
		run.Send(t, st.s)
		waitFor(t, st.what, func() bool { return lastEvents(id) == 3+i })
		snap(st.what, id)
	}
	run.Send(t, status(protocol.StateInputRequired, "Which city?"))
	answer := <-respc
	if got := str(t, answer, "result", "task", "status", "state"); got != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("turn 1 state %s", got)
	}
	snap("input-required", id)

	go func() {
		respc <- h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-2", `,"taskId":"`+id+`"`, "")})
	}()
	run = agent.Next(t)
	snap("turn 2 working", id)
	run.Send(t, text("Paris"))
	waitFor(t, "turn 2 chunk", func() bool {
		rec, _ := h.store.Get(context.Background(), "alice", id)
		return len(rec.Task.Artifacts) == 3
	})
	snap("turn 2 chunk", id)
	cancel := h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("CancelTask", `{"id":"`+id+`"}`)})
	if got := str(t, cancel, "result", "status", "state"); got != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel answered %v", cancel)
	}
	<-respc
	snap("canceled", id)

	for _, c := range caps {
		if got := snapshotJSON(t, c.task); got != c.json {
			t.Errorf("snapshot %q changed after it was stored:\n was %s\n now %s", c.what, c.json, got)
		}
	}
	// The conversation itself is whole: the merged text, the data part
	// and the text after it, both user messages and the agent's question.
	final := caps[len(caps)-1].task
	main := final.Artifacts[0]
	if len(main.Parts) != 3 || main.Parts[0].Text != "Hello" || string(main.Parts[1].Data) != `{"k":1}` || main.Parts[2].Text != "!" {
		t.Errorf("main artifact %+v", main.Parts)
	}
	if len(final.History) != 3 || final.History[0].ID != "m-1" || final.History[2].ID != "m-2" {
		t.Errorf("history %+v", final.History)
	}
}

// TestRacingContinuations: two sends continue one input-required task at
// once. One wins; the other is refused (-32004, the task is running), and
// the stored history ends with the winner's message only — the two never
// append into one shared array.
func TestRacingContinuations(t *testing.T) {
	for range 20 {
		agent := controlledAgent()
		h := newHarness(t, agent)
		go h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", `{"returnImmediately":true}`)})
		run := agent.Next(t)
		id := run.Req.TaskID
		run.Send(t, status(protocol.StateInputRequired, "Which city?"))
		waitFor(t, "input-required", func() bool {
			rec, err := h.store.Get(context.Background(), "alice", id)
			return err == nil && rec.Task.Status.State == protocol.StateInputRequired
		})
		answers := make(chan map[string]any, 2)
		for _, m := range []string{"m-a", "m-b"} {
			go func() {
				answers <- h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", m, `,"taskId":"`+id+`"`, `{"returnImmediately":true}`)})
			}()
		}
		won := agent.Next(t)
		var refused int
		for range 2 {
			if a := <-answers; has(a, "error") {
				wantError(t, a, -32004, 7, true, "UNSUPPORTED_OPERATION")
				refused++
			}
		}
		rec, err := h.store.Get(context.Background(), "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		hist := rec.Task.History
		if refused != 1 || len(hist) != 3 || hist[2].ID != won.Req.Message.ID {
			t.Fatalf("refused %d; history %+v; the run continues with %s", refused, hist, won.Req.Message.ID)
		}
		close(won.Steps)
	}
}
