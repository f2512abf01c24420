package replicas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// sendCtx is a blocking SendMessage of msg as caller, ended by ctx, made
// from any goroutine: the task, or the JSON-RPC error, or why the call
// broke.
func sendCtx(ctx context.Context, url, caller string, msg map[string]any) (task, *rpcError, error) {
	p, _ := json.Marshal(map[string]any{"message": msg})
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":%s}`, ids.Add(1), p)
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("X-Caller", caller)
	resp, err := client.Do(req)
	if err != nil {
		return task{}, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return task{}, nil, err
	}
	var env struct {
		Result struct {
			Task task `json:"task"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return task{}, nil, fmt.Errorf("%w: %s", err, raw)
	}
	return env.Result.Task, env.Error, nil
}

// One message sent twenty times at once, half to each replica: the agent
// is called once, and every caller gets the one completed task.
func TestReplicasSendOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag, ra, rb := pair(t, storeURL)
		msg := message("echo once", "")
		type answer struct {
			tk   task
			rerr *rpcError
			err  error
		}
		answers := make(chan answer, 20)
		var start sync.WaitGroup
		start.Add(1)
		for i := range 20 {
			url := ra.URL()
			if i%2 == 1 {
				url = rb.URL()
			}
			go func() {
				start.Wait()
				tk, rerr, err := sendCtx(ctxT(t), url, "alice", msg)
				answers <- answer{tk, rerr, err}
			}()
		}
		start.Done()
		var id string
		for range 20 {
			a := <-answers
			if a.err != nil || a.rerr != nil {
				t.Fatalf("a send: %v %+v", a.err, a.rerr)
			}
			if id == "" {
				id = a.tk.ID
			}
			if a.tk.ID != id || a.tk.Status.State != "TASK_STATE_COMPLETED" || a.tk.text() != "echo: once" {
				t.Fatalf("a send answered %+v, want task %s completed with echo: once", a.tk, id)
			}
		}
		if c := ag.Contexts(); len(c) != 1 {
			t.Fatalf("the agent was called %d times, want once", len(c))
		}
		// Another message under the id is refused on either replica.
		other := message("echo twice", "")
		other["messageId"] = msg["messageId"]
		for _, url := range []string{ra.URL(), rb.URL()} {
			if _, rerr, err := sendCtx(ctxT(t), url, "alice", other); err != nil || rerr == nil || rerr.Code != -32602 {
				t.Fatalf("another message under the id: %v %+v, want -32602", err, rerr)
			}
		}
		// Bob's same id is his own send.
		if tk, rerr, err := sendCtx(ctxT(t), rb.URL(), "bob", msg); err != nil || rerr != nil || tk.ID == id || tk.text() != "echo: once" {
			t.Fatalf("bob's send of the id: %+v %v %+v", tk, err, rerr)
		}
		if c := ag.Contexts(); len(c) != 2 {
			t.Fatalf("the agent was called %d times, want twice", len(c))
		}
	})
}

// A client whose connection is cut while its blocking send waits on A
// sends again to B: B waits for the run going on A and answers its task;
// the agent is called once.
func TestReplicasRetryAfterCut(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag, ra, rb := pair(t, storeURL)
		msg := message("stream 2", "")
		ctx, cut := context.WithCancel(ctxT(t))
		first := make(chan error, 1)
		go func() {
			_, _, err := sendCtx(ctx, ra.URL(), "alice", msg)
			first <- err
		}()
		// The run is going once the agent was called.
		deadline := time.Now().Add(10 * time.Second)
		for len(ag.Contexts()) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the agent was not called")
			}
			time.Sleep(5 * time.Millisecond)
		}
		cut()
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cut send: %v", err)
		}
		retry := make(chan task, 1)
		go func() {
			tk, rerr, err := sendCtx(ctxT(t), rb.URL(), "alice", msg)
			if err != nil || rerr != nil {
				t.Errorf("the retry on B: %v %+v", err, rerr)
			}
			retry <- tk
		}()
		select {
		case tk := <-retry:
			t.Fatalf("the retry answered %+v before the run on A ended", tk)
		case <-time.After(100 * time.Millisecond):
		}
		ag.next <- struct{}{}
		ag.next <- struct{}{}
		select {
		case tk := <-retry:
			if tk.Status.State != "TASK_STATE_COMPLETED" || tk.text() != "c1 c2 " {
				t.Fatalf("the retry on B answered %+v", tk)
			}
			if got := waitState(t, ra.URL(), "alice", tk.ID, "TASK_STATE_COMPLETED"); got.text() != "c1 c2 " {
				t.Fatalf("A reads %+v", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the retry on B did not answer")
		}
		if c := ag.Contexts(); len(c) != 1 {
			t.Fatalf("the agent was called %d times, want once", len(c))
		}
	})
}

// With reply message, one message sent twenty times at once, half to
// each replica, calls the agent once: every caller gets the one Message.
func TestReplicasMessageReplyOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag := startAgent(t)
		var reps [2]*replica
		for i, port := range []int{portA, portB} {
			cfg := strings.Replace(replicaConfig(port, ag.URL(), storeURL, "", "off"), "\t\towner ", "\t\treply message\n\t\towner ", 1)
			reps[i] = runReplica(t, string(rune('A'+i)), port, cfg)
		}
		msg := message("echo once", "")
		p, _ := json.Marshal(map[string]any{"message": msg})
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":%s}`, p)
		type answer struct {
			id, text string
			err      error
		}
		answers := make(chan answer, 20)
		for i := range 20 {
			url := reps[i%2].URL()
			go func() {
				req, _ := http.NewRequestWithContext(ctxT(t), "POST", url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("A2A-Version", "1.0")
				req.Header.Set("X-Caller", "alice")
				resp, err := client.Do(req)
				if err != nil {
					answers <- answer{err: err}
					return
				}
				defer resp.Body.Close()
				var env struct {
					Result struct {
						Message struct {
							MessageID string `json:"messageId"`
							Parts     []struct {
								Text string `json:"text"`
							} `json:"parts"`
						} `json:"message"`
					} `json:"result"`
					Error *rpcError `json:"error"`
				}
				if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env.Error != nil || len(env.Result.Message.Parts) != 1 {
					answers <- answer{err: fmt.Errorf("%v %+v %+v", err, env.Error, env.Result)}
					return
				}
				answers <- answer{id: env.Result.Message.MessageID, text: env.Result.Message.Parts[0].Text}
			}()
		}
		var id string
		for range 20 {
			a := <-answers
			if a.err != nil {
				t.Fatal(a.err)
			}
			if id == "" {
				id = a.id
			}
			if a.id != id || a.text != "echo: once" {
				t.Fatalf("a send answered %+v, want message %s", a, id)
			}
		}
		if c := ag.Contexts(); len(c) != 1 {
			t.Fatalf("the agent was called %d times, want once", len(c))
		}
	})
}
