package handler

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// readyAgent plays its steps, as stepsAgent does, from a stream that says
// its next event is always in hand (upstream.Ready): the whole script is.
type readyAgent []step

type readyStream struct{ *stepsStream }

func (readyStream) Ready() bool { return true }

func (a readyAgent) Run(ctx context.Context, _ *upstream.RunRequest) (upstream.Stream, error) {
	return readyStream{&stepsStream{ctx: ctx, steps: a}}, nil
}

// countingStore records every Update's events; with conflictOnce the
// first Update carrying more than one event loses its compare-and-set (an
// eventless write of the task, as stored, comes first).
type countingStore struct {
	store.Store
	mu           sync.Mutex
	updates      [][]protocol.Event
	conflictOnce bool
}

func (s *countingStore) Update(ctx context.Context, id string, v uint64, t *protocol.Task, evs ...protocol.Event) (uint64, string, error) {
	s.mu.Lock()
	s.updates = append(s.updates, evs)
	race := s.conflictOnce && len(evs) > 1
	if race {
		s.conflictOnce = false
	}
	s.mu.Unlock()
	if race {
		rec, err := s.Store.Get(ctx, "", id)
		if err != nil {
			return 0, "", err
		}
		if _, _, err := s.Store.Update(ctx, id, rec.Version, rec.Task); err != nil {
			return 0, "", err
		}
	}
	return s.Store.Update(ctx, id, v, t, evs...)
}

func (s *countingStore) counts() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := make([]int, len(s.updates))
	for i, u := range s.updates {
		n[i] = len(u)
	}
	return n
}

// logShape is an event log as kinds and texts, without ids and
// timestamps.
func logShape(t *testing.T, st store.Store, id string) string {
	t.Helper()
	evs, err := st.Events(context.Background(), id, "", false)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range evs {
		switch ev := e.Event; {
		case ev.Task != nil:
			fmt.Fprintf(&b, "task(%s) ", ev.Task.Status.State)
		case ev.Status != nil:
			fmt.Fprintf(&b, "status(%s,final=%v) ", ev.Status.Status.State, ev.Status.Final)
		case ev.Artifact != nil:
			var texts []string
			for _, p := range ev.Artifact.Artifact.Parts {
				texts = append(texts, p.Text)
			}
			fmt.Fprintf(&b, "artifact(%q,append=%v,last=%v) ", strings.Join(texts, "|"), ev.Artifact.Append, ev.Artifact.LastChunk)
		}
	}
	return strings.TrimSpace(b.String())
}

// sendBlocking sends "hello" anonymously, blocking, and returns the Task
// answered.
func sendBlocking(t *testing.T, svc *Service) *protocol.Task {
	t.Helper()
	ev, perr := svc.SendMessage(context.Background(), Caller{}, &protocol.SendParams{Message: userMessage("m", "hello"), Blocking: true})
	if perr != nil || ev.Task == nil {
		t.Fatalf("send: %+v, %v", ev, perr)
	}
	return ev.Task
}

// A stream whose next event is in hand has the run's writes joined: the
// log, the answer and the stored task are what writing each change alone
// gives, in fewer writes (and at most maxHeld changes held).
func TestHeldWritesJoinWhatIsInHand(t *testing.T) {
	chunks := func(n int) []step {
		var s []step
		for i := range n {
			s = append(s, text(fmt.Sprintf("c%d", i)))
		}
		return s
	}
	completed := step{ev: upstream.Event{Kind: upstream.EventStatus, State: protocol.StateCompleted,
		Parts: []protocol.Part{{Kind: protocol.PartText, Text: "done"}}}}
	for _, tc := range []struct {
		name  string
		steps []step
		// joined is the events of each Update when the stream is Ready,
		// alone without it; the send's Create holds the Task and working.
		joined, alone []int
	}{
		{"plain answer", []step{text("hi")}, []int{3}, []int{1, 2}},
		{"chunks then a status", []step{text("a"), text("b"), completed}, []int{4}, []int{1, 1, 2}},
		{"more than maxHeld", chunks(20), []int{9, 9, 4}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs [2]string
			var answers [2][]protocol.Part
			for i, ready := range []bool{true, false} {
				cs := &countingStore{}
				var agent upstream.Agent = stepsAgent(tc.steps)
				if ready {
					agent = readyAgent(tc.steps)
				}
				svc := newTestService(t, agent, func(o *Options) { cs.Store = o.Store; o.Store = cs })
				task := sendBlocking(t, svc)
				if task.Status.State != protocol.StateCompleted {
					t.Fatalf("state %s: %+v", task.Status.State, task)
				}
				want := tc.alone
				if ready {
					want = tc.joined
				}
				if got := cs.counts(); want != nil && fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("ready=%v: events per Update %v, want %v", ready, got, want)
				}
				logs[i] = logShape(t, cs, task.ID)
				answers[i] = task.Artifacts[0].Parts
			}
			if logs[0] != logs[1] {
				t.Fatalf("joined writes changed the log:\njoined %s\nalone  %s", logs[0], logs[1])
			}
			if !reflect.DeepEqual(answers[0], answers[1]) {
				t.Fatalf("joined writes changed the answer: %+v / %+v", answers[0], answers[1])
			}
			if !strings.HasPrefix(logs[0], "task(submitted) status(working,final=false) artifact(") {
				t.Fatalf("log %s", logs[0])
			}
		})
	}
}

// A joined write that loses its compare-and-set to a change that does not
// end the task applies every held change again, once each.
func TestHeldWritesReappliedAfterConflict(t *testing.T) {
	cs := &countingStore{conflictOnce: true}
	completed := step{ev: upstream.Event{Kind: upstream.EventStatus, State: protocol.StateCompleted,
		Parts: []protocol.Part{{Kind: protocol.PartText, Text: "done"}}}}
	svc := newTestService(t, readyAgent{text("a"), text("b"), completed},
		func(o *Options) { cs.Store = o.Store; o.Store = cs })
	task := sendBlocking(t, svc)
	if p := task.Artifacts[0].Parts; len(p) != 1 || p[0].Kind != protocol.PartText || p[0].Text != "ab" {
		t.Fatalf("artifact parts %+v, want the one text part ab", p)
	}
	// The one that lost, then the same again on the fresh snapshot (the
	// racing write goes around the count).
	if got := fmt.Sprint(cs.counts()); got != "[4 4]" || cs.conflictOnce {
		t.Fatalf("events per Update %s, want [4 4], after a conflict (%v)", got, !cs.conflictOnce)
	}
	want := `task(submitted) status(working,final=false) artifact("a",append=false,last=false) ` +
		`artifact("b",append=true,last=false) artifact("",append=true,last=true) status(completed,final=true)`
	if got := logShape(t, cs, task.ID); got != want {
		t.Fatalf("log\n%s\nwant\n%s", got, want)
	}
}

// A run whose writes would take the task's log past the store's bound
// fails the task, with the generic message.
func TestEventLogBoundFailsTask(t *testing.T) {
	steps := make(stepsAgent, 50)
	for i := range steps {
		steps[i] = text("x")
	}
	small := memory.New(memory.Options{MaxEventsPerTask: 10})
	defer small.Close()
	task := sendBlocking(t, newTestService(t, steps, func(o *Options) { o.Store = small }))
	if m := task.Status.Message; task.Status.State != protocol.StateFailed || m == nil || len(m.Parts) != 1 ||
		m.Parts[0].Text != "The agent could not complete the task." {
		t.Fatalf("task %s, status message %+v", task.Status.State, task.Status.Message)
	}
}
