package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// marker is planted in every injected error: it must never reach a caller.
const marker = "MARKER-c0ffee-internal"

// failStore fails the operation named by op (none when "") with an error
// that carries the marker, as a broken backend's driver error would.
type failStore struct {
	store.Store
	op atomic.Value // string
}

func (s *failStore) fail(op string) error {
	if cur, _ := s.op.Load().(string); cur == op {
		return fmt.Errorf("%s: dial tcp 10.0.0.9:6379: %s\ngoroutine 7 [running]:\nmain.secret()", op, marker)
	}
	return nil
}

func (s *failStore) Create(ctx context.Context, owner string, t *protocol.Task, evs ...protocol.Event) (uint64, error) {
	if err := s.fail("Create"); err != nil {
		return 0, err
	}
	return s.Store.Create(ctx, owner, t, evs...)
}

func (s *failStore) Get(ctx context.Context, owner, id string) (*store.Record, error) {
	if err := s.fail("Get"); err != nil {
		return nil, err
	}
	return s.Store.Get(ctx, owner, id)
}

func (s *failStore) Update(ctx context.Context, id string, v uint64, t *protocol.Task, evs ...protocol.Event) (uint64, string, error) {
	if err := s.fail("Update"); err != nil {
		return 0, "", err
	}
	return s.Store.Update(ctx, id, v, t, evs...)
}

func (s *failStore) List(ctx context.Context, owner string, q store.ListQuery) (*store.ListPage, error) {
	if err := s.fail("List"); err != nil {
		return nil, err
	}
	return s.Store.List(ctx, owner, q)
}

func (s *failStore) Events(ctx context.Context, id, after string, wait bool) ([]store.StoredEvent, error) {
	if err := s.fail("Events"); err != nil {
		return nil, err
	}
	return s.Store.Events(ctx, id, after, wait)
}

func (s *failStore) SignalCancel(ctx context.Context, id string) error {
	if err := s.fail("SignalCancel"); err != nil {
		return err
	}
	return s.Store.SignalCancel(ctx, id)
}

// hygieneCalls are one of every request shape, in both versions, against
// task id (an input-required task of alice).
func hygieneCalls(id string) []req {
	v10, v03 := "1.0", ""
	return []req{
		{version: v10, owner: "alice", body: sendV10("SendMessage", "m", "", "")},
		{version: v10, owner: "alice", body: sendV10("SendMessage", "m", "", `{"returnImmediately":true}`)},
		{version: v03, owner: "alice", body: sendV03("message/send", "m", "", "")},
		{version: v10, owner: "alice", body: sendV10("SendStreamingMessage", "m", "", "")},
		{version: v03, owner: "alice", body: sendV03("message/stream", "m", "", "")},
		{version: v10, owner: "alice", body: rpcCall("GetTask", `{"id":"`+id+`"}`)},
		{version: v03, owner: "alice", body: rpcCall("tasks/get", `{"id":"`+id+`"}`)},
		{version: v10, owner: "alice", body: rpcCall("ListTasks", `{}`)},
		{version: v10, owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+id+`"}`)},
		{version: v03, owner: "alice", body: rpcCall("tasks/resubscribe", `{"id":"`+id+`"}`)},
		{version: v10, owner: "alice", body: sendV10("SendMessage", "m2", `,"taskId":"`+id+`"`, "")},
		{version: v03, owner: "alice", body: rpcCall("tasks/cancel", `{"id":"`+id+`"}`)},
		{version: v10, owner: "alice", body: rpcCall("CancelTask", `{"id":"`+id+`"}`)},
	}
}

// exchange makes one call and returns the raw answer, headers included.
func (h *harness) exchange(t *testing.T, r req) string {
	t.Helper()
	raw, ok := h.tryExchange(t, r)
	if !ok {
		t.Fatalf("no answer to %s", r.body)
	}
	return raw
}

// tryExchange is exchange for calls that may never answer: streams are
// read until they end or a short deadline (with a broken store some never
// end, and what was sent until then is what counts); a call without even
// response headers by then is reported as not answered.
func (h *harness) tryExchange(t *testing.T, r req) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.version != "" {
		hr.Header.Set("A2A-Version", r.version)
	}
	if r.owner != "" {
		hr.Header.Set(ownerHeader, r.owner)
	}
	resp, err := h.srv.Client().Do(hr)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", false
		}
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var sb strings.Builder
	for k, vs := range resp.Header {
		fmt.Fprintf(&sb, "%s: %s\n", k, strings.Join(vs, ","))
	}
	return sb.String() + "\n" + string(body), true
}

// errorIDRE finds the error id of a -32603: 1.0 carries it in the
// ErrorInfo metadata, 0.3 (no error data) in the message.
var errorIDRE = regexp.MustCompile(`"errorId":"([0-9a-f]+)"|\(error id ([0-9a-f]+)\)`)

func TestNoInternalTextReachesCallers(t *testing.T) {
	for _, op := range []string{"Create", "Get", "Update", "List", "Events", "SignalCancel"} {
		t.Run("store "+op, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			fs := &failStore{}
			h := newHarness(t, scriptAgent(status(protocol.StateInputRequired, "more?")), func(o *handler.Options) {
				fs.Store = o.Store
				o.Store = fs
				o.Logger = zap.New(core)
			})
			first := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-0", "", "")})
			id := str(t, first, "result", "task", "id")
			fs.op.Store(op)

			internal := 0
			for _, r := range hygieneCalls(id) {
				raw, ok := h.tryExchange(t, r)
				if !ok {
					continue
				}
				if strings.Contains(raw, marker) || strings.Contains(raw, "10.0.0.9") || strings.Contains(raw, "goroutine") {
					t.Fatalf("internal text reached the caller of %s:\n%s", r.body, raw)
				}
				for _, m := range errorIDRE.FindAllStringSubmatch(raw, -1) {
					internal++
					id := m[1] + m[2]
					if len(id) != 16 {
						t.Fatalf("error id %q is not 16 hex digits", id)
					}
					if !strings.Contains(raw, `"code":-32603`) || !strings.Contains(raw, `"message":"Internal error`) {
						t.Fatalf("error id outside a generic -32603: %s", raw)
					}
					// The same id is in the log, next to the real error.
					found := logs.FilterField(zap.String("error_id", id)).All()
					if len(found) != 1 || !strings.Contains(fmt.Sprint(found[0].ContextMap()["error"]), marker) {
						t.Fatalf("error id %s: log entries %v", id, found)
					}
				}
			}
			// Every failing operation but the best-effort cancel signal
			// surfaces as at least one internal error.
			if op != "SignalCancel" && internal == 0 {
				t.Fatalf("no -32603 with an error id while %s fails", op)
			}
		})
	}
}

func TestNoAgentTextReachesCallers(t *testing.T) {
	leak := errors.New("upstream: POST http://10.0.0.9/agent: " + marker)
	for _, tc := range []struct {
		name  string
		agent *fakeAgent
	}{
		{"run error", &fakeAgent{RunErr: leak}},
		{"stream error", scriptAgent(text("partial"), step{Err: leak})},
		{"failed with detail", scriptAgent(step{Event: upstream.Event{Kind: upstream.EventStatus, State: protocol.StateFailed, Detail: marker}})},
		{"working with detail", scriptAgent(step{Event: upstream.Event{Kind: upstream.EventStatus, State: protocol.StateWorking, Detail: marker}}, text("x"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.agent)
			for _, r := range hygieneCalls("no-such-task")[:5] {
				raw := h.exchange(t, r)
				if strings.Contains(raw, marker) || strings.Contains(raw, "10.0.0.9") {
					t.Fatalf("agent error text reached the caller of %s:\n%s", r.body, raw)
				}
				if !strings.Contains(raw, "STATE_") && !strings.Contains(raw, `"state":`) {
					t.Fatalf("no task in the answer: %s", raw)
				}
			}
		})
	}
}
