package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// TestBehaviour runs the service's behaviour suite over JSON-RPC, in
// both versions the endpoint serves: 1.0's PascalCase methods with
// A2A-Version: 1.0, and 0.3's slash methods without it (0.3 has no
// ListTasks, so its client lists over 1.0, on the same endpoint).
func TestBehaviour(t *testing.T) {
	for _, v := range []protocol.Version{protocol.V10, protocol.V03} {
		t.Run(v.String(), func(t *testing.T) {
			handlertest.Run(t, func(t *testing.T, svc *handler.Service) handlertest.Client {
				return newRPCClient(t, svc, v)
			})
		})
	}
}

// rpcClient is the suite's Client over JSON-RPC: each call a POST of a
// request made with the version codec's client side, each answer read
// with it. It checks the envelope as it reads: 200, the media type, the
// response id the request's, in every stream frame too.
type rpcClient struct {
	t   *testing.T
	srv *httptest.Server
	// v is the version of the calls; codecs[v] reads and writes them.
	v      protocol.Version
	codecs [protocol.V10 + 1]protocol.Codec
	ids    atomic.Int64
}

func newRPCClient(t *testing.T, svc *handler.Service, v protocol.Version) *rpcClient {
	ep := New(svc)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ep.Serve(w, r, body, handler.Caller{Owner: r.Header.Get(ownerHeader)})
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	c := &rpcClient{t: t, srv: srv, v: v}
	for _, v := range []protocol.Version{protocol.V03, protocol.V10} {
		c.codecs[v] = protocol.NewCodec(v, protocol.Limits{})
	}
	return c
}

// broken reports an answer that breaks the envelope: the test fails, and
// the call answers an error no scenario expects (code 0), so that the
// scenario stops where it is, in whichever goroutine it called.
func (c *rpcClient) broken(format string, args ...any) *protocol.Error {
	msg := fmt.Sprintf(format, args...)
	c.t.Errorf("JSON-RPC: %s", msg)
	return &protocol.Error{Message: "broken answer: " + msg}
}

// post sends a call of method m in version v with params as owner and
// returns the response and the request's id.
func (c *rpcClient) post(ctx context.Context, owner string, v protocol.Version, m protocol.Method, params []byte, lastEventID string) (*http.Response, int64, *protocol.Error) {
	id := c.ids.Add(1)
	body := protocol.AppendRequest(nil, id, c.codecs[v].MethodName(m), params)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.srv.URL, bytes.NewReader(body))
	if err != nil {
		return nil, 0, c.broken("%v", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if v == protocol.V10 {
		hr.Header.Set("A2A-Version", "1.0")
	}
	if owner != "" {
		hr.Header.Set(ownerHeader, owner)
	}
	if lastEventID != "" {
		hr.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.srv.Client().Do(hr)
	if err != nil {
		return nil, 0, c.broken("%s: %v", m, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, 0, c.broken("%s answered HTTP %d, want 200", m, resp.StatusCode)
	}
	return resp, id, nil
}

// unary makes a call of method m in version v and returns its result.
func (c *rpcClient) unary(ctx context.Context, owner string, v protocol.Version, m protocol.Method, params []byte) (json.RawMessage, *protocol.Error) {
	resp, id, perr := c.post(ctx, owner, v, m, params, "")
	if perr != nil {
		return nil, perr
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		return nil, c.broken("%s answered Content-Type %q", m, ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, c.broken("%s: %v", m, err)
	}
	return c.response(v, m, id, body)
}

// response reads one JSON-RPC response of version v (a whole answer or
// a stream frame) to the request of id. An error has a message, and its
// data is the version's: in 1.0 an array whose ErrorInfo (domain
// a2a-protocol.org) carries the A2A code's reason; in 0.3 an object or
// nothing, never an array (0.3 clients cannot read one).
func (c *rpcClient) response(v protocol.Version, m protocol.Method, id int64, body []byte) (json.RawMessage, *protocol.Error) {
	got, result, rpcErr, err := protocol.DecodeResponse(body)
	if err != nil {
		return nil, c.broken("%s answered %s: %v", m, body, err)
	}
	if got != id {
		return nil, c.broken("%s answered id %d, want %d", m, got, id)
	}
	if rpcErr == nil {
		return result, nil
	}
	isArray := bytes.HasPrefix(bytes.TrimSpace(rpcErr.Data), []byte("["))
	reason := handlertest.ReasonOf(rpcErr.Code)
	switch {
	case rpcErr.Message == "":
		return nil, c.broken("%s answered error %d without a message", m, rpcErr.Code)
	case v == protocol.V03 && isArray:
		return nil, c.broken("%s answered 0.3 error data %s, an array", m, rpcErr.Data)
	case v == protocol.V10 && reason != "" && (rpcErr.Reason != reason || !bytes.Contains(rpcErr.Data, []byte(`"domain":"`+protocol.ErrorDomain+`"`))):
		return nil, c.broken("%s answered error %d with data %s, want an ErrorInfo of reason %s", m, rpcErr.Code, rpcErr.Data, reason)
	}
	return nil, rpcErr
}

func (c *rpcClient) Send(ctx context.Context, owner string, p *protocol.SendParams) (*protocol.Event, *protocol.Error) {
	codec := c.codecs[c.v]
	result, perr := c.unary(ctx, owner, c.v, protocol.MethodSend, codec.AppendSendParams(nil, p))
	if perr != nil {
		return nil, perr
	}
	ev, err := codec.DecodeSendResult(result)
	if err != nil {
		return nil, c.broken("send result %s: %v", result, err)
	}
	return ev, nil
}

func (c *rpcClient) GetTask(ctx context.Context, owner string, p *protocol.GetTaskParams) (*protocol.Task, *protocol.Error) {
	return c.task(ctx, owner, protocol.MethodGetTask, c.codecs[c.v].AppendGetTaskParams(nil, p))
}

func (c *rpcClient) CancelTask(ctx context.Context, owner string, id string) (*protocol.Task, *protocol.Error) {
	return c.task(ctx, owner, protocol.MethodCancelTask, c.codecs[c.v].AppendTaskIDParams(nil, &protocol.TaskIDParams{ID: id}))
}

// task makes a call of method m that answers a Task.
func (c *rpcClient) task(ctx context.Context, owner string, m protocol.Method, params []byte) (*protocol.Task, *protocol.Error) {
	result, perr := c.unary(ctx, owner, c.v, m, params)
	if perr != nil {
		return nil, perr
	}
	task, err := c.codecs[c.v].DecodeTask(result)
	if err != nil {
		return nil, c.broken("%s result %s: %v", m, result, err)
	}
	return task, nil
}

func (c *rpcClient) ListTasks(ctx context.Context, owner string, p *protocol.ListTasksParams) (*protocol.ListTasksResult, *protocol.Error) {
	result, perr := c.unary(ctx, owner, protocol.V10, protocol.MethodListTasks, handlertest.ListTasksParams(p))
	if perr != nil {
		return nil, perr
	}
	res, err := handlertest.DecodeListTasks(c.codecs[protocol.V10], result)
	if err != nil {
		return nil, c.broken("ListTasks result %s: %v", result, err)
	}
	return res, nil
}

func (c *rpcClient) Stream(ctx context.Context, owner string, p *protocol.SendParams) (handlertest.Events, *protocol.Error) {
	return c.stream(ctx, owner, protocol.MethodStream, c.codecs[c.v].AppendSendParams(nil, p), "")
}

func (c *rpcClient) Subscribe(ctx context.Context, owner string, id, lastEventID string) (handlertest.Events, *protocol.Error) {
	return c.stream(ctx, owner, protocol.MethodSubscribe, c.codecs[c.v].AppendTaskIDParams(nil, &protocol.TaskIDParams{ID: id}), lastEventID)
}

// stream opens a streaming call and reads its first frame. An error
// before the stream is a plain JSON-RPC answer; 0.3's tasks/resubscribe
// answers it as the stream's one frame instead, which is the call's error
// all the same.
func (c *rpcClient) stream(ctx context.Context, owner string, m protocol.Method, params []byte, lastEventID string) (handlertest.Events, *protocol.Error) {
	resp, id, perr := c.post(ctx, owner, c.v, m, params, lastEventID)
	if perr != nil {
		return nil, perr
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	switch ct := resp.Header.Get("Content-Type"); ct {
	case "application/json":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, c.broken("%s: %v", m, err)
		}
		if _, perr := c.response(c.v, m, id, body); perr != nil {
			return nil, perr
		}
		return nil, c.broken("%s answered a result, not a stream: %s", m, body)
	case "text/event-stream":
	default:
		return nil, c.broken("%s answered Content-Type %q", m, ct)
	}
	return handlertest.OpenSSE(resp.Body, c.v == protocol.V03, func(frame []byte) (protocol.Event, error) {
		result, perr := c.response(c.v, m, id, frame)
		if perr != nil {
			return protocol.Event{}, perr
		}
		ev, err := c.codecs[c.v].DecodeStreamResult(result)
		if err != nil {
			return protocol.Event{}, c.broken("%s frame %s: %v", m, result, err)
		}
		return *ev, nil
	}, c.broken)
}
