package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// The agent's answers are canned bytes, so they are checked byte for byte,
// and read by the a2a-go v2 client, an independent 1.0 decoder.

// post sends body to path with A2A-Version: 1.0 and returns the answer.
func post(t *testing.T, srv *httptest.Server, path, version, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func send(method, message string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{"message":` + message + `}}`
}

const userMessage = `{"messageId":"m-1","contextId":"ctx-1","role":"ROLE_USER","parts":[{"text":"hi \"1\""},{"text":"-2"}]}`

func TestCard(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	for _, tc := range []struct {
		base    string
		streams bool
	}{{"/echo", true}, {"/echo-blocking", false}, {"/chunks/3/1ms", true}} {
		t.Run(tc.base, func(t *testing.T) {
			resp, err := srv.Client().Get(srv.URL + tc.base + cardSuffix)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := `{"name":"Bench agent","description":"Canned A2A 1.0 agent of the caddy-a2a gateway benchmark",` +
				`"version":"1.0.0","supportedInterfaces":[{"url":"` + srv.URL + tc.base + `/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
				`"capabilities":{"streaming":` + strconv.FormatBool(tc.streams) + `},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
				`"skills":[{"id":"echo","name":"Echo","description":"Answers the text it was sent","tags":["echo","bench"]}]}`
			if string(b) != want || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("card %s\n%s\nwant\n%s", resp.Header.Get("Content-Type"), b, want)
			}
			card, err := agentcard.NewResolver(srv.Client()).Resolve(context.Background(), srv.URL+tc.base)
			if err != nil {
				t.Fatal(err)
			}
			in := card.SupportedInterfaces
			if len(in) != 1 || in[0].URL != srv.URL+tc.base+"/rpc" || in[0].ProtocolBinding != a2a.TransportProtocolJSONRPC ||
				string(in[0].ProtocolVersion) != "1.0" || card.Capabilities.Streaming != tc.streams || len(card.Skills[0].Tags) != 2 {
				t.Fatalf("a2a-go read %+v", card)
			}
		})
	}
}

func TestSendMessage(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	seq.Store(0)
	resp, body := post(t, srv, "/echo/rpc", "1.0", send("SendMessage", userMessage))
	want := `{"jsonrpc":"2.0","id":7,"result":{"task":{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED"},` +
		`"artifacts":[{"artifactId":"artifact-1","name":"ok","parts":[{"text":"hi \"1\"-2"}]}]}}}`
	if resp.StatusCode != 200 || body != want || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %s\n%s\nwant\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
	}
	// Without a context id, and with a task id (a later turn): the agent
	// makes the one and keeps the other.
	_, body = post(t, srv, "/echo-blocking/rpc", "1.0", send("SendMessage", `{"messageId":"m","taskId":"t-9","role":"ROLE_USER","parts":[{"text":"x"}]}`))
	want = `{"jsonrpc":"2.0","id":7,"result":{"task":{"id":"t-9","contextId":"context-2","status":{"state":"TASK_STATE_COMPLETED"},` +
		`"artifacts":[{"artifactId":"artifact-2","name":"ok","parts":[{"text":"x"}]}]}}}`
	if body != want {
		t.Fatalf("%s\nwant\n%s", body, want)
	}
}

func TestErrors(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	for _, tc := range []struct {
		name, path, version, body, want string
	}{
		{"no version", "/echo/rpc", "", send("SendMessage", userMessage),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32009,"message":"Version not supported: \"\", this agent speaks 1.0"}}`},
		{"version 0.3", "/echo/rpc", "0.3", send("SendMessage", userMessage),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32009,"message":"Version not supported: \"0.3\", this agent speaks 1.0"}}`},
		{"other method", "/echo/rpc", "1.0", send("GetTask", userMessage),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found: GetTask"}}`},
		{"0.3 method name", "/echo/rpc", "1.0", send("message/send", userMessage),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found: message/send"}}`},
		{"no message id", "/echo/rpc", "1.0", send("SendMessage", `{"role":"ROLE_USER","parts":[{"text":"x"}]}`),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: message needs messageId, role ROLE_USER and parts"}}`},
		{"0.3 role", "/echo/rpc", "1.0", send("SendMessage", `{"messageId":"m","role":"user","parts":[{"text":"x"}]}`),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: message needs messageId, role ROLE_USER and parts"}}`},
		{"no parts", "/echo/rpc", "1.0", send("SendMessage", `{"messageId":"m","role":"ROLE_USER","parts":[]}`),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: message needs messageId, role ROLE_USER and parts"}}`},
		{"file part", "/echo/rpc", "1.0", send("SendMessage", `{"messageId":"m","role":"ROLE_USER","parts":[{"url":"http://x/y"}]}`),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: this agent takes text parts only"}}`},
		{"no message", "/echo/rpc", "1.0", `{"jsonrpc":"2.0","id":"s","method":"SendMessage","params":{}}`,
			`{"jsonrpc":"2.0","id":"s","error":{"code":-32602,"message":"Invalid params: message is required"}}`},
		{"not JSON", "/echo/rpc", "1.0", `{"jsonrpc":`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"notification", "/echo/rpc", "1.0", `{"jsonrpc":"2.0","method":"SendMessage","params":{}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string or a number"}}`},
		{"jsonrpc 1.0", "/echo/rpc", "1.0", `{"jsonrpc":"1.0","id":1,"method":"SendMessage","params":{}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, srv, tc.path, tc.version, tc.body)
			if resp.StatusCode != 200 || body != tc.want {
				t.Fatalf("HTTP %d %s\nwant %s", resp.StatusCode, body, tc.want)
			}
		})
	}
	resp, _ := post(t, srv, "/chunks/0/1ms/rpc", "1.0", send("SendMessage", userMessage))
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/chunks/0/1ms: HTTP %d, want 404", resp.StatusCode)
	}
}

func TestStreamBytes(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	seq.Store(0)
	resp, body := post(t, srv, "/echo/rpc", "1.0", send("SendStreamingMessage", userMessage))
	ids := `"taskId":"task-1","contextId":"ctx-1",`
	want := `data: {"jsonrpc":"2.0","id":7,"result":{"task":{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_SUBMITTED"}}}}` + "\n\n" +
		`data: {"jsonrpc":"2.0","id":7,"result":{"artifactUpdate":{` + ids + `"artifact":{"artifactId":"artifact-1","name":"ok","parts":[{"text":"hi \"1\"-2"}]},"append":false,"lastChunk":true}}}` + "\n\n" +
		`data: {"jsonrpc":"2.0","id":7,"result":{"statusUpdate":{` + ids + `"status":{"state":"TASK_STATE_COMPLETED"}}}}` + "\n\n"
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || body != want {
		t.Fatalf("HTTP %d %s\n%s\nwant\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
	}
}

// TestChunksArePaced reads a paced stream as it comes: each chunk's stamp
// is taken just before its write, so it is at most a little older than
// its arrival, and the chunks are the pause apart.
func TestChunksArePaced(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chunks/4/20ms/rpc", strings.NewReader(send("SendStreamingMessage", userMessage)))
	req.Header.Set("A2A-Version", "1.0")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var stamps []int64
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		arrived := time.Now().UnixNano()
		_, v, ok := strings.Cut(line, `"parts":[{"text":"`)
		if !ok {
			continue
		}
		v, _, _ = strings.Cut(v, `"`)
		ts, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if age := time.Duration(arrived - ts); age < 0 || age > 15*time.Millisecond {
			t.Fatalf("chunk %d arrived %v after its stamp", len(stamps), age)
		}
		stamps = append(stamps, ts)
	}
	if len(stamps) != 4 {
		t.Fatalf("%d chunks, want 4", len(stamps))
	}
	for i := 1; i < len(stamps); i++ {
		if gap := time.Duration(stamps[i] - stamps[i-1]); gap < 20*time.Millisecond {
			t.Fatalf("chunks %d and %d %v apart, want ≥ 20ms", i-1, i, gap)
		}
	}
}

// TestA2AGoClient reads both sends with the a2a-go v2 client.
func TestA2AGoClient(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	ctx := context.Background()
	card, err := agentcard.NewResolver(srv.Client()).Resolve(ctx, srv.URL+"/chunks/3/1ms")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go"))
	msg.ContextID = "ctx-go"
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.ContextID != "ctx-go" || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 3 {
		t.Fatalf("SendMessage: %#v", res)
	}
	var kinds []string
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			kinds = append(kinds, "task "+string(e.Status.State))
		case *a2a.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact append="+strconv.FormatBool(e.Append)+" last="+strconv.FormatBool(e.LastChunk)+" "+e.ContextID)
		case *a2a.TaskStatusUpdateEvent:
			kinds = append(kinds, "status "+string(e.Status.State))
		default:
			t.Fatalf("event %#v", ev)
		}
	}
	want := "task TASK_STATE_SUBMITTED|artifact append=false last=false ctx-go|artifact append=true last=false ctx-go|" +
		"artifact append=true last=true ctx-go|status TASK_STATE_COMPLETED"
	if got := strings.Join(kinds, "|"); got != want {
		t.Fatalf("stream\n%s\nwant\n%s", got, want)
	}
}
