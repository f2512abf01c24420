package call

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream/upstreamtest"
)

func newService(t *testing.T) *handler.Service {
	st := memory.New(memory.Options{MaxTasks: 100})
	runner := handler.NewRunner(zap.NewNop())
	svc, err := handler.New(handler.Options{Store: st, Agent: upstreamtest.Echo{}, Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := runner.Close(); err != nil {
			t.Error(err)
		}
		st.Close()
	})
	return svc
}

// TestTable: each unary method of the table, in the codec's JSON of 1.0,
// answers what its method answers; a send's task is then found by get,
// list and cancel (already completed: -32002); bad params are -32602
// before the service is called; what is not a unary method is -32601.
func TestTable(t *testing.T) {
	svc := newService(t)
	codec := svc.Wire().Codec(protocol.V10)
	c := handler.Caller{Owner: "alice"}
	ctx := context.Background()

	res, perr := Unary(ctx, svc, c, codec, protocol.MethodSend,
		[]byte(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`))
	if perr != nil {
		t.Fatal(perr)
	}
	sent := string(res.Append(nil))
	if !strings.HasPrefix(sent, `{"task":{"id":"`) || !strings.Contains(sent, `"TASK_STATE_COMPLETED"`) || res.Empty() {
		t.Fatalf("send answered %s", sent)
	}
	id := strings.SplitN(strings.TrimPrefix(sent, `{"task":{"id":"`), `"`, 2)[0]

	for _, tt := range []struct {
		m      protocol.Method
		params string
		want   string // a piece of the answer, or of the error's message
		code   int    // 0: no error
	}{
		{protocol.MethodGetTask, `{"id":"` + id + `"}`, `"id":"` + id + `"`, 0},
		{protocol.MethodListTasks, `{}`, `"tasks":[{"id":"` + id + `"`, 0},
		{protocol.MethodCancelTask, `{"id":"` + id + `"}`, "", protocol.CodeTaskNotCancelable},
		{protocol.MethodGetTask, `{"id":"nope"}`, "", protocol.CodeTaskNotFound},
		{protocol.MethodGetTask, `{"id":7}`, "", protocol.CodeInvalidParams},
		{protocol.MethodSend, `{"message":{}}`, "", protocol.CodeInvalidParams},
		{protocol.MethodPushSet, `{"taskId":"` + id + `","url":"https://example.com/hook"}`, "", protocol.CodePushNotSupported},
		{protocol.MethodStream, `{}`, "", protocol.CodeMethodNotFound},
		{protocol.MethodExtendedCard, `{}`, "", protocol.CodeMethodNotFound},
	} {
		res, perr := Unary(ctx, svc, c, codec, tt.m, []byte(tt.params))
		switch {
		case tt.code != 0 && (perr == nil || perr.Code != tt.code):
			t.Errorf("%v %s: error %v, want code %d", tt.m, tt.params, perr, tt.code)
		case tt.code == 0 && perr != nil:
			t.Errorf("%v %s: %v", tt.m, tt.params, perr)
		case tt.code == 0 && !strings.Contains(string(res.Append(nil)), tt.want):
			t.Errorf("%v %s: answered %s, want %s in it", tt.m, tt.params, res.Append(nil), tt.want)
		}
	}
}

// TestCheck: Check names the params error a call would answer, without
// calling anything, and nothing for good params.
func TestCheck(t *testing.T) {
	codec := newService(t).Wire().Codec(protocol.V10)
	for _, tt := range []struct {
		m      protocol.Method
		params string
		bad    bool
	}{
		{protocol.MethodSend, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`, false},
		{protocol.MethodStream, `{"message":{"role":"ROLE_USER"}}`, true},
		{protocol.MethodGetTask, `{"id":"t"}`, false},
		{protocol.MethodCancelTask, `{}`, true},
		{protocol.MethodSubscribe, `{"id":1}`, true},
		{protocol.MethodListTasks, `{"pageSize":"x"}`, true},
		{protocol.MethodExtendedCard, `{"anything":1}`, false},
	} {
		perr := Check(codec, tt.m, []byte(tt.params))
		if got := perr != nil; got != tt.bad || (perr != nil && perr.Code != protocol.CodeInvalidParams) {
			t.Errorf("%v %s: %v, want a -32602: %v", tt.m, tt.params, perr, tt.bad)
		}
	}
}

// TestEmpty: only a push config's delete has an answer without a body.
func TestEmpty(t *testing.T) {
	for _, m := range []protocol.Method{protocol.MethodSend, protocol.MethodGetTask, protocol.MethodPushGet, protocol.MethodPushList} {
		if (&Result{kind: m}).Empty() {
			t.Errorf("%v is Empty", m)
		}
	}
	r := Result{kind: protocol.MethodPushDelete}
	if !r.Empty() || string(r.Append([]byte("x"))) != "x" {
		t.Error("a delete's answer is not Empty")
	}
}
