package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Exactly-once sends through Caddy, over every binding and both
// versions: a message sent again under its messageId is answered from
// the first send's task and never reaches the agent again.

// sent is what one send answered, read the same over every wire:
// the task's id, state and artifact text, or that the messageId was
// refused as used for another message (the binding's invalid-params
// answer), or why the call broke.
type sent struct {
	id, state, text string
	reused          bool
	err             error
}

// sendWire is one binding and version's send, safe to call from any
// goroutine.
type sendWire struct {
	name string
	send func(ctx context.Context, owner, mid, text string, blocking bool) sent
}

// holdAgent answers "done: <input>" to every call; an input starting
// with "hold" waits for the test to let it go (gate) first.
func holdAgent(t *testing.T, gate chan struct{}) *agent {
	return newAgent(t, func(w http.ResponseWriter, r *http.Request, c agentCall) {
		if strings.HasPrefix(c.inputText(), "hold") {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "done: "+c.inputText())
	})
}

// postJSON posts body to url as owner with the headers kv, and decodes
// the answer into v; the HTTP status is returned.
func postJSON(ctx context.Context, url, owner, body string, v any, kv ...string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Caller", owner)
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return resp.StatusCode, fmt.Errorf("%w: %s", err, raw)
	}
	return resp.StatusCode, nil
}

// jsonTask is a task as either version's JSON carries it.
type jsonTask struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Artifacts []struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

func (t *jsonTask) sent() sent {
	s := sent{id: t.ID, state: strings.ToLower(strings.TrimPrefix(t.Status.State, "TASK_STATE_"))}
	for _, a := range t.Artifacts {
		for _, p := range a.Parts {
			s.text += p.Text
		}
	}
	return s
}

// restError is the HTTP+JSON error body of both versions.
type restError struct {
	Error *struct {
		Status string `json:"status"`
	} `json:"error"`
}

// sendWires are the six sends: JSON-RPC, HTTP+JSON and gRPC, each in
// 1.0 and 0.3, all on the mount restConfig makes with grpc on.
func sendWires(t *testing.T) []sendWire {
	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	g10, g03 := a2apb.NewA2AServiceClient(conn), a2apb03.NewA2AServiceClient(conn)
	grpcSent := func(err error) sent {
		if status.Code(err) == codes.InvalidArgument {
			return sent{reused: true}
		}
		return sent{err: err}
	}
	return []sendWire{
		{"jsonrpc-1.0", func(ctx context.Context, owner, mid, text string, blocking bool) sent {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]},"configuration":{"returnImmediately":%t}}}`, mid, text, !blocking)
			var env struct {
				Result struct{ Task jsonTask } `json:"result"`
				Error  *rpcError               `json:"error"`
			}
			if _, err := postJSON(ctx, rpcURL, owner, body, &env, "A2A-Version", "1.0"); err != nil {
				return sent{err: err}
			}
			if env.Error != nil {
				return sent{reused: env.Error.Code == -32602, err: fmt.Errorf("error %d %s", env.Error.Code, env.Error.Message)}
			}
			return env.Result.Task.sent()
		}},
		{"jsonrpc-0.3", func(ctx context.Context, owner, mid, text string, blocking bool) sent {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":%q,"role":"user","parts":[{"kind":"text","text":%q}]},"configuration":{"blocking":%t}}}`, mid, text, blocking)
			var env struct {
				Result jsonTask  `json:"result"`
				Error  *rpcError `json:"error"`
			}
			if _, err := postJSON(ctx, rpcURL, owner, body, &env); err != nil {
				return sent{err: err}
			}
			if env.Error != nil {
				return sent{reused: env.Error.Code == -32602, err: fmt.Errorf("error %d %s", env.Error.Code, env.Error.Message)}
			}
			return env.Result.sent()
		}},
		{"rest-1.0", func(ctx context.Context, owner, mid, text string, blocking bool) sent {
			body := fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]},"configuration":{"returnImmediately":%t}}`, mid, text, !blocking)
			var ans struct {
				Task jsonTask `json:"task"`
				restError
			}
			code, err := postJSON(ctx, restURL+"/message:send", owner, body, &ans, "A2A-Version", "1.0")
			if err != nil {
				return sent{err: err}
			}
			if ans.Error != nil {
				return sent{reused: code == 400 && ans.Error.Status == "INVALID_ARGUMENT", err: fmt.Errorf("HTTP %d %s", code, ans.Error.Status)}
			}
			return ans.Task.sent()
		}},
		{"rest-0.3", func(ctx context.Context, owner, mid, text string, blocking bool) sent {
			body := fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","content":[{"text":%q}]},"configuration":{"blocking":%t}}`, mid, text, blocking)
			var ans struct {
				Task jsonTask `json:"task"`
				restError
			}
			code, err := postJSON(ctx, restURL+"/v1/message:send", owner, body, &ans)
			if err != nil {
				return sent{err: err}
			}
			if ans.Error != nil {
				return sent{reused: code == 400 && ans.Error.Status == "INVALID_ARGUMENT", err: fmt.Errorf("HTTP %d %s", code, ans.Error.Status)}
			}
			return ans.Task.sent()
		}},
		{"grpc-1.0", func(ctx context.Context, owner, mid, text string, blocking bool) sent {
			ctx = metadata.NewOutgoingContext(ctx, metadata.Pairs("a2a-version", "1.0", "x-caller", owner))
			res, err := g10.SendMessage(ctx, &a2apb.SendMessageRequest{
				Message:       &a2apb.Message{MessageId: mid, Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}},
				Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: !blocking},
			})
			if err != nil {
				return grpcSent(err)
			}
			tk := res.GetTask()
			s := sent{id: tk.GetId(), state: strings.ToLower(strings.TrimPrefix(tk.GetStatus().GetState().String(), "TASK_STATE_"))}
			for _, a := range tk.GetArtifacts() {
				for _, p := range a.GetParts() {
					s.text += p.GetText()
				}
			}
			return s
		}},
		{"grpc-0.3", func(ctx context.Context, owner, mid, text string, blocking bool) sent {
			ctx = metadata.NewOutgoingContext(ctx, metadata.Pairs("a2a-version", "0.3", "x-caller", owner))
			res, err := g03.SendMessage(ctx, &a2apb03.SendMessageRequest{
				Request:       &a2apb03.Message{MessageId: mid, Role: a2apb03.Role_ROLE_USER, Parts: []*a2apb03.Part{{Part: &a2apb03.Part_Text{Text: text}}}},
				Configuration: &a2apb03.SendMessageConfiguration{Blocking: blocking},
			})
			if err != nil {
				return grpcSent(err)
			}
			tk := res.GetTask()
			s := sent{id: tk.GetId(), state: strings.ToLower(strings.TrimPrefix(tk.GetStatus().GetState().String(), "TASK_STATE_"))}
			if s.state == "cancelled" {
				s.state = "canceled"
			}
			for _, a := range tk.GetArtifacts() {
				for _, p := range a.GetParts() {
					s.text += p.GetText()
				}
			}
			return s
		}},
	}
}

// sendsCtx bounds one send.
func sendsCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestExactlyOnceSends: over each binding and version, a message sent
// twice, then twenty times at once, then again while its run goes on,
// runs the agent once, and every send gets the one task; another message
// under a used messageId is refused; another caller's same id is its own.
// Every retry is counted in caddy_a2a_sends_deduplicated_total and reads
// true in {http.a2a.deduplicated}.
func TestExactlyOnceSends(t *testing.T) {
	gate := make(chan struct{})
	a := holdAgent(t, gate)
	loadGlobal(t, h2cGlobal, `http://:9080 {
	header >X-Deduplicated {http.a2a.deduplicated}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		rest_path /a2a/rest
		grpc on
		owner {http.request.header.X-Caller}
	}
}
`, map[string]any{"Agent": a.URL()})
	dedupKey := `caddy_a2a_sends_deduplicated_total{server="srv0"}`
	before, _ := strconv.Atoi(metricLines(t)[dedupKey])
	var mids atomic.Int64
	newMID := func() string { return "x-" + strconv.FormatInt(mids.Add(1), 10) }
	calls := 0
	wantCalls := func(t *testing.T, what string, n int) {
		t.Helper()
		calls += n
		if got := len(a.Calls()); got != calls {
			t.Fatalf("%s: the agent was called %d times in all, want %d", what, got, calls)
		}
	}
	retries := 0
	for _, w := range sendWires(t) {
		t.Run(w.name, func(t *testing.T) {
			alice, bob := "alice-"+w.name, "bob-"+w.name
			// Twice in a row.
			mid := newMID()
			first := w.send(sendsCtx(t), alice, mid, "echo a", true)
			again := w.send(sendsCtx(t), alice, mid, "echo a", true)
			if first.err != nil || first.state != "completed" || first.text != "done: echo a" || again != first {
				t.Fatalf("a send and its retry: %+v, %+v", first, again)
			}
			wantCalls(t, "a send and its retry", 1)
			// Twenty at once.
			mid20 := newMID()
			ctx := sendsCtx(t)
			answers := make(chan sent, 20)
			var start sync.WaitGroup
			start.Add(1)
			for range 20 {
				go func() {
					start.Wait()
					answers <- w.send(ctx, alice, mid20, "echo b", true)
				}()
			}
			start.Done()
			var one sent
			for i := range 20 {
				s := <-answers
				if i == 0 {
					one = s
				}
				if s.err != nil || s.state != "completed" || s.text != "done: echo b" || s != one {
					t.Fatalf("a send of twenty: %+v, want %+v", s, one)
				}
			}
			wantCalls(t, "twenty sends at once", 1)
			// A retry while the run goes on waits for it; a non-blocking one
			// answers the task working.
			midHold := newMID()
			held := make(chan sent, 2)
			go func() { held <- w.send(ctx, alice, midHold, "hold c", true) }()
			for deadline := time.Now().Add(5 * time.Second); len(a.Calls()) == calls; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the agent was not called")
				}
			}
			go func() { held <- w.send(ctx, alice, midHold, "hold c", true) }()
			if s := w.send(ctx, alice, midHold, "hold c", false); s.err != nil || s.state != "working" {
				t.Fatalf("a non-blocking retry while the run goes on: %+v", s)
			}
			select {
			case s := <-held:
				t.Fatalf("a blocking send answered %+v while its run goes on", s)
			case <-time.After(100 * time.Millisecond):
			}
			gate <- struct{}{}
			s1, s2 := <-held, <-held
			if s1.err != nil || s1.state != "completed" || s1.text != "done: hold c" || s2 != s1 {
				t.Fatalf("a send and its retry while it ran: %+v, %+v", s1, s2)
			}
			wantCalls(t, "a retry while the run goes on", 1)
			// Another message under a used id, even in another version's
			// shape, is refused; another caller's same id is its own.
			if s := w.send(sendsCtx(t), alice, mid, "echo other", true); !s.reused {
				t.Fatalf("another message under a used messageId: %+v, want invalid params", s)
			}
			wantCalls(t, "another message under a used messageId", 0)
			if s := w.send(sendsCtx(t), bob, mid, "echo a", true); s.err != nil || s.id == first.id || s.text != "done: echo a" {
				t.Fatalf("bob's send of alice's messageId: %+v", s)
			}
			wantCalls(t, "another caller's send", 1)
			retries += 1 + 19 + 2
		})
	}
	// The placeholder: false for a first send, true for its retry.
	mid := newMID()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"` + mid + `","role":"ROLE_USER","parts":[{"text":"echo p"}]}}}`
	for i, want := range []string{"false", "true"} {
		r := post(t, rpcURL, "1.0", body, withHeader("X-Caller", "carol"))
		if got := r.Header.Get("X-Deduplicated"); got != want {
			t.Fatalf("send %d: X-Deduplicated %q, want %q", i+1, got, want)
		}
	}
	retries++
	want := strconv.Itoa(before + retries)
	if got := settledMetrics(t, map[string]string{dedupKey: want})[dedupKey]; got != want {
		t.Fatalf("%s = %s, want %s", dedupKey, got, want)
	}
}

// TestSendsDedupeWindow: dedupe_window bounds how long a messageId is
// remembered (a send after it runs again), and off runs every send.
func TestSendsDedupeWindow(t *testing.T) {
	a := holdAgent(t, nil)
	load(t, `http://:9080 {
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		store memory {
			share window
		}
		limits {
			dedupe_window 300ms
		}
	}
}
http://:9081 {
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		store memory {
			share off
		}
		limits {
			dedupe_window off
		}
	}
}
`, map[string]any{"Agent": a.URL()})
	msg := msg10("echo w", "", "")
	first := send10(t, rpcURL, msg)
	if again := send10(t, rpcURL, msg); again.ID != first.ID || len(a.Calls()) != 1 {
		t.Fatalf("a retry within the window: %s, want %s, %d calls", again.ID, first.ID, len(a.Calls()))
	}
	time.Sleep(400 * time.Millisecond)
	if later := send10(t, rpcURL, msg); later.ID == first.ID || len(a.Calls()) != 2 {
		t.Fatalf("a send after the window: %s (the first was %s), %d calls", later.ID, first.ID, len(a.Calls()))
	}
	off := base2 + "/a2a"
	one, two := send10(t, off, msg), send10(t, off, msg)
	if one.ID == two.ID || len(a.Calls()) != 4 {
		t.Fatalf("with dedupe_window off: %s and %s, %d calls", one.ID, two.ID, len(a.Calls()))
	}
}

// TestExactlyOnceMessageReplies: with reply message, a send and its
// retries (twice in a row, then ten at once) call the agent once and
// answer the same Message, in 1.0 and 0.3; a retry while the agent still
// answers waits for it.
func TestExactlyOnceMessageReplies(t *testing.T) {
	gate := make(chan struct{})
	a := holdAgent(t, gate)
	load(t, minimal("reply message"), map[string]any{"Agent": a.URL()})
	type reply struct {
		MessageID string `json:"messageId"`
		Parts     []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	send := func(ctx context.Context, version, body string) (reply, error) {
		var env struct {
			Result struct {
				Message reply `json:"message"`
				reply
			} `json:"result"`
			Error *rpcError `json:"error"`
		}
		kv := []string{}
		if version != "" {
			kv = []string{"A2A-Version", version}
		}
		if _, err := postJSON(ctx, rpcURL, "", body, &env, kv...); err != nil {
			return reply{}, err
		}
		if env.Error != nil {
			return reply{}, fmt.Errorf("error %d %s", env.Error.Code, env.Error.Message)
		}
		if version == "" {
			return env.Result.reply, nil
		}
		return env.Result.Message, nil
	}
	bodies := map[string]func(mid, text string) string{
		"1.0": func(mid, text string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}}`, mid, text)
		},
		"": func(mid, text string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":%q,"role":"user","parts":[{"kind":"text","text":%q}]}}}`, mid, text)
		},
	}
	calls := 0
	for version, body := range bodies {
		mid := "r-" + version
		ctx := sendsCtx(t)
		held := make(chan reply, 2)
		go func() { r, _ := send(ctx, version, body(mid, "hold r")); held <- r }()
		for deadline := time.Now().Add(5 * time.Second); len(a.Calls()) == calls; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the agent was not called")
			}
		}
		calls++
		go func() { r, _ := send(ctx, version, body(mid, "hold r")); held <- r }()
		select {
		case r := <-held:
			t.Fatalf("%s: a send answered %+v while its agent answers", version, r)
		case <-time.After(100 * time.Millisecond):
		}
		gate <- struct{}{}
		first, second := <-held, <-held
		if first.MessageID == "" || second.MessageID != first.MessageID || len(first.Parts) != 1 || first.Parts[0].Text != "done: hold r" {
			t.Fatalf("%s: a reply and its retry: %+v, %+v", version, first, second)
		}
		answers := make(chan reply, 10)
		for range 10 {
			go func() { r, _ := send(ctx, version, body(mid, "hold r")); answers <- r }()
		}
		for range 10 {
			if r := <-answers; r.MessageID != first.MessageID {
				t.Fatalf("%s: a retry of ten answered %+v, want %s", version, r, first.MessageID)
			}
		}
		if n := len(a.Calls()); n != calls {
			t.Fatalf("%s: the agent was called %d times, want %d", version, n, calls)
		}
		if _, err := send(ctx, version, body(mid, "another")); err == nil || !strings.Contains(err.Error(), "-32602") {
			t.Fatalf("%s: another message under the id: %v, want -32602", version, err)
		}
	}
}
