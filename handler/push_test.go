package handler

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// A config gets the changes written after it was set, never an older
// one the dispatcher had yet to work out: here the task's creation is
// held in the queue while the config is set, then let go.
func TestPushConfigGetsNoOlderChange(t *testing.T) {
	got := make(chan string, 10)
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	t.Cleanup(rx.Close)
	g, err := push.NewGuard([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	d := push.New(push.Options{})
	t.Cleanup(func() { d.Close() })
	svc := newTestService(t, stepsAgent{status(protocol.StateInputRequired, "more?")}, func(o *Options) {
		o.Push = &PushOptions{Dispatcher: d, Guard: g, Client: push.NewClient(g), Timeout: time.Second, MaxAttempts: 1, MaxConfigs: 5}
	})
	alice := Caller{Owner: "alice"}
	ctx := context.Background()
	res, perr := svc.SendMessage(ctx, alice, &protocol.SendParams{Message: userMessage("m-1", "hi"), Blocking: true})
	if perr != nil {
		t.Fatal(perr)
	}
	task := res.Task

	// Hold the task's queue, queue a change, set the config, let go.
	hold := make(chan struct{})
	d.Enqueue(task.ID, func(context.Context) []push.Delivery { <-hold; return nil })
	svc.notify(alice.Owner, task, "old", []protocol.Event{{Task: task}})
	if _, perr := svc.SetPushConfig(ctx, alice, &protocol.PushConfig{TaskID: task.ID, URL: rx.URL, Version: protocol.V10}); perr != nil {
		t.Fatal(perr)
	}
	close(hold)
	// A change after the config reaches it, and it is the first.
	svc.notify(alice.Owner, task, "new", []protocol.Event{{Status: &protocol.StatusUpdate{TaskID: task.ID, ContextID: task.ContextID, Status: task.Status}}})
	select {
	case b := <-got:
		want := `{"statusUpdate":`
		if len(b) < len(want) || b[:len(want)] != want {
			t.Fatalf("first delivery %s, want the status update set after the config", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no delivery")
	}
	select {
	case b := <-got:
		t.Fatalf("a second delivery: %s", b)
	case <-time.After(100 * time.Millisecond):
	}
}
