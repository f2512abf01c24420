package jsonrpc

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

func TestSendHistoryLength(t *testing.T) {
	h := newHarness(t, scriptAgent(status(protocol.StateInputRequired, "more?")))
	first := h.rpc(req{version: "1.0", owner: "a", body: sendV10("SendMessage", "m-1", "", "")})
	id := str(t, first, "result", "task", "id")
	// Continue so the task holds user, agent, user, agent.
	h.rpc(req{version: "1.0", owner: "a", body: sendV10("SendMessage", "m-2", `,"taskId":"`+id+`"`, "")})
	get := func(hl string) map[string]any {
		return h.rpc(req{version: "1.0", owner: "a", body: rpcCall("GetTask", `{"id":"`+id+`"`+hl+`}`)})
	}
	if n := len(at(t, get(""), "result", "history").([]any)); n != 4 {
		t.Fatalf("full history has %d messages", n)
	}
	r := get(`,"historyLength":2`)
	if n := len(at(t, r, "result", "history").([]any)); n != 2 {
		t.Fatalf("historyLength 2 gave %d", n)
	}
	if got := str(t, r, "result", "history", 0, "messageId"); got != "m-2" {
		t.Fatalf("historyLength keeps the most recent: first is %s", got)
	}
	if has(get(`,"historyLength":0`), "result", "history") {
		t.Fatalf("historyLength 0 must omit history")
	}
	// And on the send itself.
	r = h.rpc(req{version: "1.0", owner: "a", body: sendV10("SendMessage", "m-3", `,"taskId":"`+id+`"`, `{"historyLength":1}`)})
	if n := len(at(t, r, "result", "task", "history").([]any)); n != 1 {
		t.Fatalf("send historyLength 1 gave %d", n)
	}
}

func TestSendInputModes(t *testing.T) {
	h := newHarness(t, scriptAgent(text("x")), func(o *handler.Options) { o.InputModes = []string{"text/plain", "image/*"} })
	for _, tc := range []struct {
		name  string
		parts string
		code  int64
	}{
		{"text", `[{"text":"hi"}]`, 0},
		{"image wildcard", `[{"url":"https://e.x/a.png","mediaType":"image/png"}]`, 0},
		{"file without media type", `[{"url":"https://e.x/a"}]`, 0},
		{"text with charset", `[{"text":"hi","mediaType":"text/plain; charset=utf-8"}]`, 0},
		{"data part", `[{"data":{"a":1}}]`, -32005},
		{"pdf", `[{"url":"https://e.x/a.pdf","mediaType":"application/pdf"}]`, -32005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := rpcCall("SendMessage", `{"message":{"messageId":"`+mid()+`","role":"ROLE_USER","parts":`+tc.parts+`}}`)
			resp := h.rpc(req{version: "1.0", body: body})
			if tc.code == 0 {
				if !has(resp, "result", "task") {
					t.Fatalf("want a task: %v", resp)
				}
				return
			}
			wantError(t, resp, tc.code, 3, true, "CONTENT_TYPE_NOT_SUPPORTED")
		})
	}
}

func TestSendBlockingClientGone(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL, strings.NewReader(sendV10("SendMessage", mid(), "", "")))
		hr.Header.Set("A2A-Version", "1.0")
		resp, err := h.srv.Client().Do(hr)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	run := agent.Next(t)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("request succeeded after cancel")
	}
	run.Send(t, text("still"))
	close(run.Steps)
	waitFor(t, "task completed", func() bool {
		rec, err := h.store.Get(context.Background(), "", run.Req.TaskID)
		return err == nil && rec.Task.Status.State == protocol.StateCompleted
	})
}
