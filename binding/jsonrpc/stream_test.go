package jsonrpc

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// openStream starts a streaming call and returns its reader; the stream is
// closed with the test.
func (h *harness) openStream(t testing.TB, r req) *sseReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	resp := h.post(ctx, r)
	t.Cleanup(func() { resp.Body.Close() })
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Fatalf("Cache-Control %q", cc)
	}
	if xa := resp.Header.Get("X-Accel-Buffering"); xa != "no" {
		t.Fatalf("X-Accel-Buffering %q", xa)
	}
	return newSSEReader(t, resp)
}

// kindOf names the event a stream frame carries, for both versions.
func kindOf(t testing.TB, m map[string]any) string {
	t.Helper()
	res := at(t, m, "result").(map[string]any)
	if k, ok := res["kind"].(string); ok {
		return k // 0.3: task, status-update, artifact-update
	}
	for _, k := range []string{"task", "statusUpdate", "artifactUpdate", "message"} {
		if _, ok := res[k]; ok {
			return k
		}
	}
	t.Fatalf("unknown stream result %v", res)
	return ""
}

func TestStreamOrderV10(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	s := h.openStream(t, req{version: "1.0", owner: "alice", body: sendV10("SendStreamingMessage", "m-1", "", "")})

	f, m := s.event(t)
	if kindOf(t, m) != "task" || str(t, m, "result", "task", "status", "state") != "TASK_STATE_SUBMITTED" || f.id == "" {
		t.Fatalf("first frame %v (id %q)", m, f.id)
	}
	if num(t, m, "id") != 7 {
		t.Fatalf("frame id member %v", m["id"])
	}
	taskID := str(t, m, "result", "task", "id")
	ids := []string{f.id}

	run := agent.Next(t)
	f, m = s.event(t)
	ids = append(ids, f.id)
	if kindOf(t, m) != "statusUpdate" || str(t, m, "result", "statusUpdate", "status", "state") != "TASK_STATE_WORKING" {
		t.Fatalf("second frame %v", m)
	}
	// No buffering: each chunk's frame arrives before the agent sends the
	// next (the agent blocks until its step is taken).
	var artifactID string
	for i, chunk := range []string{"Hel", "lo"} {
		run.Send(t, text(chunk))
		f, m = s.event(t)
		ids = append(ids, f.id)
		if kindOf(t, m) != "artifactUpdate" {
			t.Fatalf("chunk frame %v", m)
		}
		au := at(t, m, "result", "artifactUpdate")
		if str(t, au, "artifact", "parts", 0, "text") != chunk || str(t, au, "taskId") != taskID {
			t.Fatalf("chunk %d: %v", i, au)
		}
		if appendFlag := has(au, "append") && at(t, au, "append") == true; appendFlag != (i > 0) {
			t.Fatalf("chunk %d append=%v", i, appendFlag)
		}
		if i == 0 {
			artifactID = str(t, au, "artifact", "artifactId")
		} else if str(t, au, "artifact", "artifactId") != artifactID {
			t.Fatalf("artifact id changed")
		}
	}
	close(run.Steps)
	f, m = s.event(t)
	ids = append(ids, f.id)
	au := at(t, m, "result", "artifactUpdate")
	if at(t, au, "append") != true || at(t, au, "lastChunk") != true || str(t, au, "artifact", "artifactId") != artifactID ||
		str(t, au, "artifact", "parts", 0, "text") != "" {
		t.Fatalf("closing chunk %v", au)
	}
	f, m = s.event(t)
	ids = append(ids, f.id)
	if str(t, m, "result", "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" || has(m, "result", "statusUpdate", "final") {
		t.Fatalf("final frame %v", m)
	}
	if _, err := s.next(); err != io.EOF {
		t.Fatalf("stream not closed after the final status: %v", err)
	}
	assertIncreasing(t, ids)
}

func TestStreamOrderV03(t *testing.T) {
	h := newHarness(t, scriptAgent(text("a"), text("b"), status(protocol.StateInputRequired, "more?")))
	s := h.openStream(t, req{owner: "alice", body: sendV03("message/stream", "m-1", "", "")})
	fs, ms := s.rest(t)
	var kinds []string
	for _, m := range ms {
		kinds = append(kinds, kindOf(t, m))
		if m["id"] != "r-1" {
			t.Fatalf("frame id %v", m["id"])
		}
	}
	want := []string{"task", "status-update", "artifact-update", "artifact-update", "artifact-update", "status-update"}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds %v, want %v", kinds, want)
		}
	}
	if at(t, ms[1], "result", "final") != false {
		t.Fatalf("working status final: %v", ms[1])
	}
	last := at(t, ms[5], "result")
	if str(t, last, "status", "state") != "input-required" || at(t, last, "final") != true {
		t.Fatalf("last frame %v", last)
	}
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.id
	}
	assertIncreasing(t, ids)
}

func assertIncreasing(t testing.TB, ids []string) {
	t.Helper()
	prev := -1
	for _, id := range ids {
		n, err := strconv.Atoi(id)
		if err != nil || n <= prev {
			t.Fatalf("SSE ids not increasing: %v", ids)
		}
		prev = n
	}
}

// startTask creates a task through a non-blocking send and returns its id
// and the run the agent got.
func startTask(t testing.TB, h *harness, agent *fakeAgent) (string, *fakeRun) {
	t.Helper()
	r := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", mid(), "", `{"returnImmediately":true}`)})
	return str(t, r, "result", "task", "id"), agent.Next(t)
}

func TestSubscribeReplay(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	id, run := startTask(t, h, agent)
	run.Send(t, text("one"))
	run.Send(t, text("two"))
	// The log now holds: 1 task, 2 working, 3 chunk one, (4 chunk two once
	// written). Wait for both chunks to be in the store.
	waitFor(t, "chunks stored", func() bool {
		evs, _ := h.store.Events(context.Background(), id, "", false)
		return len(evs) == 4
	})
	sub := func(lastEventID string) *sseReader {
		r := req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+id+`"}`)}
		if lastEventID != "" {
			r.header = map[string]string{"Last-Event-ID": lastEventID}
		}
		return h.openStream(t, r)
	}
	live := sub("")
	replay := sub("2")

	f, m := live.event(t)
	if f.id != "4" || str(t, m, "result", "task", "artifacts", 0, "parts", 0, "text") != "onetwo" {
		t.Fatalf("live subscribe first frame id %q: %v", f.id, m)
	}
	// A resume from 2 gets the task as it is now, which holds chunks 3
	// and 4 already, and not those chunks again: applied in order, the
	// stream gives the task's text once.
	f, m = replay.event(t)
	if f.id != "4" || kindOf(t, m) != "task" || str(t, m, "result", "task", "artifacts", 0, "parts", 0, "text") != "onetwo" {
		t.Fatalf("replay first frame id %q: %v", f.id, m)
	}
	run.Send(t, text("three"))
	close(run.Steps)
	liveFrames, _ := live.rest(t)
	replayFrames, _ := replay.rest(t)
	for _, fs := range [][]sseFrame{liveFrames, replayFrames} {
		var ids []string
		for _, f := range fs {
			ids = append(ids, f.id)
		}
		// chunk three, closing chunk, completed: nothing lost or repeated.
		if len(ids) != 3 || ids[0] != "5" || ids[1] != "6" || ids[2] != "7" {
			t.Fatalf("live ids %v", ids)
		}
	}
	for i := range liveFrames {
		if liveFrames[i].data != replayFrames[i].data {
			t.Fatalf("subscribers differ at %d:\n%s\n%s", i, liveFrames[i].data, replayFrames[i].data)
		}
	}
}

func TestTwoSubscribersIdentical(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	id, run := startTask(t, h, agent)
	body := rpcCall("SubscribeToTask", `{"id":"`+id+`"}`)
	a := h.openStream(t, req{version: "1.0", owner: "alice", body: body})
	b := h.openStream(t, req{version: "1.0", owner: "alice", body: body})
	fa, _ := a.event(t)
	fb, _ := b.event(t)
	if fa != fb {
		t.Fatalf("first frames differ:\n%v\n%v", fa, fb)
	}
	for i := range 20 {
		run.Send(t, text(strconv.Itoa(i)))
	}
	run.Send(t, status(protocol.StateWorking, "halfway"))
	close(run.Steps)
	ra, _ := a.rest(t)
	rb, _ := b.rest(t)
	if len(ra) != 23 || len(ra) != len(rb) {
		t.Fatalf("frames %d and %d, want 23", len(ra), len(rb))
	}
	for i := range ra {
		if ra[i] != rb[i] {
			t.Fatalf("frame %d differs:\n%v\n%v", i, ra[i], rb[i])
		}
	}
}

func TestStreamClientDisconnect(t *testing.T) {
	forEachWait(t, testStreamClientDisconnect)
}

func testStreamClientDisconnect(t *testing.T, wait func(*handler.Options)) {
	agent := controlledAgent()
	h := newHarness(t, agent, wait)
	ctx, cancel := context.WithCancel(context.Background())
	resp := h.post(ctx, req{version: "1.0", owner: "alice", body: sendV10("SendStreamingMessage", mid(), "", "")})
	s := newSSEReader(t, resp)
	_, m := s.event(t)
	id := str(t, m, "result", "task", "id")
	run := agent.Next(t)
	run.Send(t, text("a"))
	cancel()
	resp.Body.Close()
	run.Send(t, text("b"))
	close(run.Steps)
	waitFor(t, "task completed", func() bool {
		r := h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("GetTask", `{"id":"`+id+`"}`)})
		return str(t, r, "result", "status", "state") == "TASK_STATE_COMPLETED"
	})
	if run.Ctx.Err() != nil && run.Ctx.Err() != context.Canceled {
		t.Fatalf("run ctx %v", run.Ctx.Err())
	}
}

func TestStreamEndsOnDone(t *testing.T) {
	forEachWait(t, testStreamEndsOnDone)
}

func testStreamEndsOnDone(t *testing.T, wait func(*handler.Options)) {
	agent := controlledAgent()
	h := newHarness(t, agent, wait)
	id, run := startTask(t, h, agent)
	s := h.openStream(t, req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+id+`"}`)})
	s.event(t)
	h.closeDone()
	if fs, _ := s.rest(t); len(fs) != 0 {
		t.Fatalf("frames after Done: %v", fs)
	}
	// The run goes on.
	run.Send(t, text("still here"))
	close(run.Steps)
	waitFor(t, "task completed", func() bool {
		rec, err := h.store.Get(context.Background(), "alice", id)
		return err == nil && rec.Task.Status.State == protocol.StateCompleted
	})
}

func TestStreamHeartbeat(t *testing.T) {
	forEachWait(t, testStreamHeartbeat)
}

func testStreamHeartbeat(t *testing.T, wait func(*handler.Options)) {
	agent := controlledAgent()
	h := newHarness(t, agent, wait, func(o *handler.Options) { o.Heartbeat = 20 * time.Millisecond })
	id, run := startTask(t, h, agent)
	s := h.openStream(t, req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+id+`"}`)})
	s.event(t)
	for range 2 {
		f, err := s.next()
		if err != nil || f.comment == "" || f.data != "" {
			t.Fatalf("want a heartbeat comment, got %+v %v", f, err)
		}
	}
	close(run.Steps)
	s.rest(t)
}

func TestStreamErrors(t *testing.T) {
	h := newHarness(t, scriptAgent(text("x")))
	done := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", mid(), "", "")})
	doneID := str(t, done, "result", "task", "id")
	inputReq := newHarness(t, scriptAgent(status(protocol.StateInputRequired, "?")))
	ir := inputReq.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", mid(), "", "")})
	irID := str(t, ir, "result", "task", "id")

	for _, tc := range []struct {
		name   string
		r      req
		code   int64
		v10    bool
		reason string
	}{
		{"unknown task", req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"nope"}`)}, -32001, true, "TASK_NOT_FOUND"},
		{"unknown task 0.3", req{owner: "alice", body: rpcCall("tasks/resubscribe", `{"id":"nope"}`)}, -32001, false, ""},
		{"other owner", req{version: "1.0", owner: "bob", body: rpcCall("SubscribeToTask", `{"id":"`+doneID+`"}`)}, -32001, true, "TASK_NOT_FOUND"},
		{"terminal", req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+doneID+`"}`)}, -32004, true, "UNSUPPORTED_OPERATION"},
		{"terminal 0.3", req{owner: "alice", body: rpcCall("tasks/resubscribe", `{"id":"`+doneID+`"}`)}, -32004, false, ""},
		{"bad params", req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{}`)}, -32602, true, ""},
		{"version", req{body: sendV10("SendStreamingMessage", mid(), "", "")}, -32009, true, "VERSION_NOT_SUPPORTED"},
		{"send to terminal", req{version: "1.0", owner: "alice", body: sendV10("SendStreamingMessage", mid(), `,"taskId":"`+doneID+`"`, "")}, -32004, true, "UNSUPPORTED_OPERATION"},
		{"params not object", req{body: rpcCall("message/stream", `"x"`)}, -32602, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, h.streamError(tc.r), tc.code, idOf(tc.r.body), tc.v10, tc.reason)
		})
	}
	t.Run("bad Last-Event-ID", func(t *testing.T) {
		r := req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+irID+`"}`),
			header: map[string]string{"Last-Event-ID": "not-an-id"}}
		wantError(t, inputReq.streamError(r), -32602, 3, true, "")
	})
}

func TestSubscribeLastEventIDPastEnd(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	id, run := startTask(t, h, agent)
	waitFor(t, "working", func() bool {
		evs, _ := h.store.Events(context.Background(), id, "", false)
		return len(evs) == 2
	})
	s := h.openStream(t, req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+id+`"}`),
		header: map[string]string{"Last-Event-ID": "999"}})
	if f, _ := s.event(t); f.id != "2" {
		t.Fatalf("Task frame id %q", f.id)
	}
	close(run.Steps)
	fs, ms := s.rest(t)
	if len(fs) != 1 || fs[0].id != "3" || str(t, ms[0], "result", "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("frames %v", fs)
	}
}

// plainStore hides the memory store's store.Notifier, so streams wait
// with blocking Events calls as they would on a store without it.
type plainStore struct{ store.Store }

// forEachWait runs a stream test with both ways of waiting: the
// Notifier's channel and timer, and blocking Events calls.
func forEachWait(t *testing.T, test func(*testing.T, func(*handler.Options))) {
	t.Run("notifier", func(t *testing.T) {
		test(t, func(o *handler.Options) {
			if _, ok := o.Store.(store.Notifier); !ok {
				t.Fatal("the memory store should offer store.Notifier")
			}
		})
	})
	t.Run("blocking", func(t *testing.T) {
		test(t, func(o *handler.Options) { o.Store = plainStore{o.Store} })
	})
}
