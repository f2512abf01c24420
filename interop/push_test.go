package interop

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
)

// pushReceiver is a webhook receiver sending each body it gets on got.
func pushReceiver(t *testing.T) (chan []byte, *httptest.Server) {
	got := make(chan []byte, 100)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	t.Cleanup(hook.Close)
	return got, hook
}

// TestA2AGoV2Push: the a2a-go v2.4.0 client, over JSON-RPC, HTTP+JSON and
// gRPC, leaves a config in a send and sets, gets, lists and deletes
// configs; the receiver reads every delivery with a2a-go's own
// StreamResponse type, and the task's changes arrive in order.
func TestA2AGoV2Push(t *testing.T) {
	got, hook := pushReceiver(t)
	for _, tr := range []struct {
		name string
		opt  func(w *wire) a2aclient.FactoryOption
	}{
		{"jsonrpc", func(w *wire) a2aclient.FactoryOption { return a2aclient.WithJSONRPCTransport(w.client()) }},
		{"rest", func(w *wire) a2aclient.FactoryOption { return a2aclient.WithRESTTransport(w.client()) }},
		{"grpc", func(w *wire) a2aclient.FactoryOption { return a2agrpc.WithGRPCTransport(w.grpcOptions()...) }},
	} {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			w := newWire(t)
			card, err := agentcard.DefaultResolver.Resolve(ctx, pushURL)
			if err != nil {
				t.Fatal(err)
			}
			if !card.Capabilities.PushNotifications {
				t.Fatal("the card does not say pushNotifications")
			}
			c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), tr.opt(w))
			if err != nil {
				t.Fatalf("client: %v (%v)", err, ifaces(card))
			}
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userText("echo pushed"),
				Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: hook.URL, Token: "tok-" + tr.name}}})
			if err != nil {
				t.Fatal(err)
			}
			task, ok := res.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("send: %#v", res)
			}
			var kinds []string
			for len(kinds) == 0 || kinds[len(kinds)-1] != "status:"+string(a2a.TaskStateCompleted) {
				var b []byte
				select {
				case b = <-got:
				case <-ctx.Done():
					t.Fatalf("deliveries so far: %v", kinds)
				}
				var sr a2a.StreamResponse
				if err := json.Unmarshal(b, &sr); err != nil {
					t.Fatalf("a2a-go cannot read the delivery: %v\n%s", err, b)
				}
				switch ev := sr.Event.(type) {
				case *a2a.Task:
					kinds = append(kinds, "task:"+string(ev.Status.State))
				case *a2a.TaskStatusUpdateEvent:
					if ev.TaskID != task.ID {
						t.Fatalf("status of task %s, want %s", ev.TaskID, task.ID)
					}
					kinds = append(kinds, "status:"+string(ev.Status.State))
				case *a2a.TaskArtifactUpdateEvent:
					kinds = append(kinds, "artifact:"+partsText(ev.Artifact.Parts))
				default:
					t.Fatalf("delivery %T: %s", ev, b)
				}
			}
			want := []string{"task:" + string(a2a.TaskStateSubmitted), "status:" + string(a2a.TaskStateWorking), "artifact:echo: pushed", "status:" + string(a2a.TaskStateCompleted)}
			if len(kinds) != len(want) {
				t.Fatalf("deliveries %v, want %v", kinds, want)
			}
			for i := range want {
				if kinds[i] != want[i] {
					t.Fatalf("deliveries %v, want %v", kinds, want)
				}
			}

			created, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "second", URL: hook.URL,
				Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "k"}})
			if err != nil || created.ID != "second" || created.TaskID != task.ID || created.Auth == nil || created.Auth.Scheme != "Bearer" {
				t.Fatalf("create: %+v %v", created, err)
			}
			one, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "second"})
			if err != nil || one.URL != hook.URL {
				t.Fatalf("get: %+v %v", one, err)
			}
			all, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
			if err != nil || len(all) != 2 || all[0].Token != "tok-"+tr.name || all[1].ID != "second" {
				t.Fatalf("list: %+v %v", all, err)
			}
			for range 2 {
				if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "second"}); err != nil {
					t.Fatalf("delete: %v", err)
				}
			}
			if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "second"}); err == nil {
				t.Fatal("get after delete found the config")
			}
		})
	}
}

// TestA2AGoV03Push: the a2a-go v0.3.15 client sets, gets, lists and
// deletes configs in 0.3's JSON-RPC shapes and leaves one in a send; a
// 0.3 config's receiver gets the Task, which a2a-go v0.3 reads.
func TestA2AGoV03Push(t *testing.T) {
	got, hook := pushReceiver(t)
	ctx, w := testCtx(t), newWire(t)
	card, err := (&agentcard03.Resolver{Client: w.client()}).Resolve(ctx, pushURL)
	if err != nil {
		t.Fatal(err)
	}
	if !card.Capabilities.PushNotifications {
		t.Fatal("the 0.3 card does not say pushNotifications")
	}
	c, err := a2aclient03.NewFromCard(ctx, card, a2aclient03.WithDefaultsDisabled(), a2aclient03.WithJSONRPCTransport(w.client()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: text03("echo pushed 0.3"),
		Config: &a2a03.MessageSendConfig{PushConfig: &a2a03.PushConfig{URL: hook.URL, Token: "t03"}}})
	if err != nil {
		t.Fatal(err)
	}
	task := asTask03(t, res)
	var states []a2a03.TaskState
	for len(states) == 0 || states[len(states)-1] != a2a03.TaskStateCompleted {
		var b []byte
		select {
		case b = <-got:
		case <-ctx.Done():
			t.Fatalf("deliveries so far: %v", states)
		}
		var tk a2a03.Task
		if err := json.Unmarshal(b, &tk); err != nil || tk.ID != task.ID {
			t.Fatalf("a2a-go v0.3 reads the delivery as %+v (%v): %s", tk, err, b)
		}
		states = append(states, tk.Status.State)
	}
	// One Task per write: the send's (created working), then the run's
	// (its artifact and completed status together).
	if len(states) != 2 || states[0] != a2a03.TaskStateWorking {
		t.Fatalf("deliveries: %v, want working, completed (one per write)", states)
	}

	set, err := c.SetTaskPushConfig(ctx, &a2a03.TaskPushConfig{TaskID: task.ID, Config: a2a03.PushConfig{ID: "c03", URL: hook.URL,
		Auth: &a2a03.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "k"}}})
	if err != nil || set.TaskID != task.ID || set.Config.ID != "c03" || set.Config.Auth == nil || set.Config.Auth.Schemes[0] != "Bearer" {
		t.Fatalf("set: %+v %v", set, err)
	}
	one, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "c03"})
	if err != nil || one.Config.URL != hook.URL {
		t.Fatalf("get: %+v %v", one, err)
	}
	all, err := c.ListTaskPushConfig(ctx, &a2a03.ListTaskPushConfigParams{TaskID: task.ID})
	if err != nil || len(all) != 2 || all[1].Config.ID != "c03" || all[0].Config.Token != "t03" {
		t.Fatalf("list: %+v %v", all, err)
	}
	for range 2 {
		if err := c.DeleteTaskPushConfig(ctx, &a2a03.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "c03"}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if _, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "c03"}); !errors.Is(err, a2a03.ErrTaskNotFound) {
		t.Fatalf("get after delete: %v, want task not found", err)
	}
}
