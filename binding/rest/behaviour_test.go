package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// TestBehaviour runs the service's behaviour suite over HTTP+JSON: 1.0's
// routes, and 0.3's under /v1 (which has no GET /tasks, so its client
// lists on the 1.0 route of the same binding).
func TestBehaviour(t *testing.T) {
	for _, v := range []protocol.Version{protocol.V10, protocol.V03} {
		t.Run(v.String(), func(t *testing.T) {
			handlertest.Run(t, func(t *testing.T, svc *handler.Service) handlertest.Client {
				return newRESTClient(t, svc, v)
			})
		})
	}
}

// restBase is where the test server serves the routes, as rest_path.
const restBase = "/a2a/rest"

// ownerHeader carries the test caller's identity to the binding.
const ownerHeader = "X-Test-Owner"

// restClient is the suite's Client over HTTP+JSON: each call a request to
// its route, the body or result in the route version's ProtoJSON, read
// with that codec's client side. It checks what HTTP+JSON adds as it
// reads: the media types, and that an error's HTTP status and canonical
// code are the ones A2A maps its code to.
type restClient struct {
	t   *testing.T
	srv *httptest.Server
	// prefix is the routes' prefix under the base ("/v1" for 0.3), codec
	// their bodies' codec; codec10 reads the 1.0 list route's.
	prefix         string
	v03            bool
	codec, codec10 protocol.Codec
}

func newRESTClient(t *testing.T, svc *handler.Service, v protocol.Version) *restClient {
	b := New(svc)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := Match(r.Method, strings.TrimPrefix(r.URL.EscapedPath(), restBase))
		if rt.Op == 0 || !b.Serves(rt) {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		b.Start(w, r, rt, body, handler.Caller{Owner: r.Header.Get(ownerHeader)}).Serve()
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	c := &restClient{t: t, srv: srv, codec: protocol.NewCodec(protocol.V10, protocol.Limits{})}
	c.codec10 = c.codec
	if v == protocol.V03 {
		c.prefix, c.v03, c.codec = "/v1", true, protocol.NewRESTCodecV03(protocol.Limits{})
	}
	return c
}

// broken reports an answer that breaks the binding: the test fails, and
// the call answers an error no scenario expects (code 0), so that the
// scenario stops where it is, in whichever goroutine it called.
func (c *restClient) broken(format string, args ...any) *protocol.Error {
	msg := fmt.Sprintf(format, args...)
	c.t.Errorf("HTTP+JSON: %s", msg)
	return &protocol.Error{Message: "broken answer: " + msg}
}

// do makes a request of method to path (under the base; the version's
// prefix is the caller's) as owner, with body when it is not nil.
func (c *restClient) do(ctx context.Context, owner, method, path string, body []byte, header map[string]string) (*http.Response, *protocol.Error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, c.srv.URL+restBase+path, rd)
	if err != nil {
		return nil, c.broken("%v", err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if owner != "" {
		hr.Header.Set(ownerHeader, owner)
	}
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	resp, err := c.srv.Client().Do(hr)
	if err != nil {
		return nil, c.broken("%s %s: %v", method, path, err)
	}
	return resp, nil
}

// call makes a unary request and returns its JSON result.
func (c *restClient) call(ctx context.Context, owner, method, path string, body []byte) ([]byte, *protocol.Error) {
	resp, perr := c.do(ctx, owner, method, path, body, nil)
	if perr != nil {
		return nil, perr
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, c.broken("%s %s: %v", method, path, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		return nil, c.broken("%s %s answered Content-Type %q", method, path, ct)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, c.status(resp.StatusCode, out, strings.HasPrefix(path, "/v1/"))
	}
	return out, nil
}

// status reads an error body: the google.rpc.Status under "error" (0.3's
// routes also put the JSON-RPC code at the top, which must agree), held
// to A2A's mapping of the code it stands for; httpStatus is the answer's
// (0 for a stream's error frame, whose answer was a 200), v03 whether
// the route was 0.3's.
func (c *restClient) status(httpStatus int, body []byte, v03 bool) *protocol.Error {
	var b struct {
		Code  *int
		Error struct {
			Code    int
			Status  string
			Message string
			Details []struct {
				Type            string `json:"@type"`
				Reason          string
				Domain          string
				Metadata        map[string]string
				FieldViolations []protocol.FieldViolation
			}
		}
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return c.broken("error body %s: %v", body, err)
	}
	st := statusCode(b.Error.Status)
	perr := &protocol.Error{Message: b.Error.Message}
	for _, d := range b.Error.Details {
		switch d.Type {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			perr.Reason, perr.Metadata = d.Reason, d.Metadata
			if d.Domain != protocol.ErrorDomain {
				return c.broken("ErrorInfo domain %q", d.Domain)
			}
		case "type.googleapis.com/google.rpc.BadRequest":
			perr.Violations = d.FieldViolations
		}
	}
	perr.Code = handlertest.CodeOf(perr.Reason, st)
	m := protocol.MapError(perr)
	switch {
	case perr.Code == 0:
		return c.broken("error body %s names no A2A error", body)
	case m.Code != st || m.HTTP != b.Error.Code || (httpStatus != 0 && httpStatus != m.HTTP):
		return c.broken("error %d answered %s, code %d on HTTP %d; A2A maps it to %s on %d", perr.Code, b.Error.Status, b.Error.Code, httpStatus, m.Code, m.HTTP)
	case v03 != (b.Code != nil) || (b.Code != nil && *b.Code != perr.Code):
		return c.broken("error body %s: the JSON-RPC code at the top is 0.3's only, and its code", body)
	}
	return perr
}

// statusCode is the canonical code named name.
func statusCode(name string) protocol.StatusCode {
	for code := range protocol.StatusCode(20) {
		if code.String() == name {
			return code
		}
	}
	return -1
}

func (c *restClient) Send(ctx context.Context, owner string, p *protocol.SendParams) (*protocol.Event, *protocol.Error) {
	out, perr := c.call(ctx, owner, http.MethodPost, c.prefix+"/message:send", c.codec.AppendSendParams(nil, p))
	if perr != nil {
		return nil, perr
	}
	ev, err := c.codec.DecodeSendResult(out)
	if err != nil {
		return nil, c.broken("send result %s: %v", out, err)
	}
	return ev, nil
}

func (c *restClient) GetTask(ctx context.Context, owner string, p *protocol.GetTaskParams) (*protocol.Task, *protocol.Error) {
	path := c.prefix + "/tasks/" + url.PathEscape(p.ID)
	if p.HistoryLength != nil {
		path += "?historyLength=" + strconv.Itoa(*p.HistoryLength)
	}
	return c.task(ctx, owner, http.MethodGet, path)
}

// CancelTask posts no body, as a2a-go's REST client does.
func (c *restClient) CancelTask(ctx context.Context, owner string, id string) (*protocol.Task, *protocol.Error) {
	return c.task(ctx, owner, http.MethodPost, c.prefix+"/tasks/"+url.PathEscape(id)+":cancel")
}

// task makes a request whose result is a Task.
func (c *restClient) task(ctx context.Context, owner, method, path string) (*protocol.Task, *protocol.Error) {
	out, perr := c.call(ctx, owner, method, path, nil)
	if perr != nil {
		return nil, perr
	}
	task, err := c.codec.DecodeTask(out)
	if err != nil {
		return nil, c.broken("%s %s result %s: %v", method, path, out, err)
	}
	return task, nil
}

func (c *restClient) ListTasks(ctx context.Context, owner string, p *protocol.ListTasksParams) (*protocol.ListTasksResult, *protocol.Error) {
	out, perr := c.call(ctx, owner, http.MethodGet, "/tasks?"+handlertest.ListTasksQuery(p).Encode(), nil)
	if perr != nil {
		return nil, perr
	}
	res, err := handlertest.DecodeListTasks(c.codec10, out)
	if err != nil {
		return nil, c.broken("ListTasks result %s: %v", out, err)
	}
	return res, nil
}

func (c *restClient) Stream(ctx context.Context, owner string, p *protocol.SendParams) (handlertest.Events, *protocol.Error) {
	return c.stream(ctx, owner, http.MethodPost, c.prefix+"/message:stream", c.codec.AppendSendParams(nil, p), nil)
}

// Subscribe uses GET, as the proto has it (POST is served too).
func (c *restClient) Subscribe(ctx context.Context, owner string, id, lastEventID string) (handlertest.Events, *protocol.Error) {
	var h map[string]string
	if lastEventID != "" {
		h = map[string]string{"Last-Event-ID": lastEventID}
	}
	return c.stream(ctx, owner, http.MethodGet, c.prefix+"/tasks/"+url.PathEscape(id)+":subscribe", nil, h)
}

// stream opens a streaming route and reads its first frame; an error
// before the stream is a plain error answer.
func (c *restClient) stream(ctx context.Context, owner, method, path string, body []byte, header map[string]string) (handlertest.Events, *protocol.Error) {
	resp, perr := c.do(ctx, owner, method, path, body, header)
	if perr != nil {
		return nil, perr
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK && ct == "application/json" {
			return nil, c.status(resp.StatusCode, out, c.v03)
		}
		return nil, c.broken("%s %s answered %d %q: %s", method, path, resp.StatusCode, ct, out)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, c.broken("%s %s answered a stream on %d", method, path, resp.StatusCode)
	}
	return handlertest.OpenSSE(resp.Body, c.v03, func(frame []byte) (protocol.Event, error) {
		if bytes.HasPrefix(frame, []byte(`{"error":`)) {
			return protocol.Event{}, c.status(0, frame, c.v03)
		}
		ev, err := c.codec.DecodeStreamResult(frame)
		if err != nil {
			return protocol.Event{}, c.broken("stream frame %s: %v", frame, err)
		}
		return *ev, nil
	}, c.broken)
}
