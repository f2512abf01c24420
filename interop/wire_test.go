package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// exchange is one HTTP round trip a client library made, kept byte for byte so
// that a failure can be reported with the exact wire evidence.
type exchange struct {
	Method, URL string
	ReqHeader   http.Header
	ReqBody     []byte
	Status      int
	RespHeader  http.Header
	mu          sync.Mutex
	respBody    bytes.Buffer
	Err         error
	// GRPCMethod is the method of a gRPC call ("SendMessage"), recorded by
	// the interceptors of grpcOptions; "" for an HTTP exchange.
	GRPCMethod string
}

// RespBody returns the response bytes read so far (streams grow as read).
func (e *exchange) RespBody() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return bytes.Clone(e.respBody.Bytes())
}

// rpcMethod is the operation of the exchange: the JSON-RPC method of the
// request body, or for an HTTP+JSON request (under restPath) its verb and
// route with the ids as {id} ("POST tasks/{id}:cancel"); "" when none.
func (e *exchange) rpcMethod() string {
	if e.GRPCMethod != "" {
		return e.GRPCMethod
	}
	if op := e.restOp(); op != "" {
		return op
	}
	var env struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(e.ReqBody, &env)
	return env.Method
}

// restOp is the HTTP+JSON operation of the exchange, "" for none.
func (e *exchange) restOp() string {
	u, err := url.Parse(e.URL)
	if err != nil {
		return ""
	}
	rel, ok := strings.CutPrefix(u.Path, restPath+"/")
	if !ok {
		return ""
	}
	segs := strings.Split(rel, "/")
	t := 0
	if segs[0] == "v1" { // 0.3's routes
		t = 1
	}
	if len(segs) >= t+2 && segs[t] == "tasks" {
		action := ""
		if i := strings.LastIndexByte(segs[t+1], ':'); i >= 0 {
			action = segs[t+1][i:]
		}
		segs[t+1] = "{id}" + action
	}
	return e.Method + " " + strings.Join(segs, "/")
}

// wire records every exchange of the clients built for one test and dumps them
// into the test log if the test fails.
type wire struct {
	mu        sync.Mutex
	exchanges []*exchange
	base      http.RoundTripper
	// header is added to every request, as an authenticating front would.
	header http.Header
}

// newWire returns a recorder whose dump is attached to t on failure.
func newWire(t *testing.T) *wire {
	t.Helper()
	w := &wire{base: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(w.dump())
		}
	})
	return w
}

// grpcOptions are the dial options of a gRPC client whose calls the
// recorder keeps: the method and the outgoing metadata as headers.
func (w *wire) grpcOptions() []grpc.DialOption {
	record := func(ctx context.Context, method string) *exchange {
		ex := &exchange{Method: http.MethodPost, URL: method, ReqHeader: http.Header{}}
		ex.GRPCMethod = method[strings.LastIndexByte(method, '/')+1:]
		md, _ := metadata.FromOutgoingContext(ctx)
		for k, vs := range md {
			for _, v := range vs {
				ex.ReqHeader.Add(k, v)
			}
		}
		w.mu.Lock()
		w.exchanges = append(w.exchanges, ex)
		w.mu.Unlock()
		return ex
	}
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			ex := record(ctx, method)
			ex.Err = invoker(ctx, method, req, reply, cc, opts...)
			return ex.Err
		}),
		grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			ex := record(ctx, method)
			cs, err := streamer(ctx, desc, cc, method, opts...)
			ex.Err = err
			return cs, err
		}),
	}
}

// client is an *http.Client that goes through the recorder.
func (w *wire) client() *http.Client { return &http.Client{Transport: w} }

// RoundTrip implements http.RoundTripper.
func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(w.header) > 0 {
		req = req.Clone(req.Context())
		for k, v := range w.header {
			req.Header[k] = v
		}
	}
	ex := &exchange{Method: req.Method, URL: req.URL.String(), ReqHeader: req.Header.Clone()}
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		ex.ReqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	w.mu.Lock()
	w.exchanges = append(w.exchanges, ex)
	w.mu.Unlock()
	resp, err := w.base.RoundTrip(req)
	if err != nil {
		ex.Err = err
		return nil, err
	}
	ex.Status = resp.StatusCode
	ex.RespHeader = resp.Header.Clone()
	resp.Body = &teeBody{rc: resp.Body, ex: ex}
	return resp, nil
}

// teeBody copies what the client reads into the exchange as it is read, so a
// stream that hangs still shows the events that did arrive.
type teeBody struct {
	rc io.ReadCloser
	ex *exchange
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.ex.mu.Lock()
		b.ex.respBody.Write(p[:n])
		b.ex.mu.Unlock()
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

// rpcs returns the JSON-RPC exchanges (POSTs) in order.
func (w *wire) rpcs() []*exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*exchange
	for _, e := range w.exchanges {
		if e.Method == http.MethodPost || e.restOp() != "" {
			out = append(out, e)
		}
	}
	return out
}

// methods lists the JSON-RPC method names sent, in order.
func (w *wire) methods() []string {
	var out []string
	for _, e := range w.rpcs() {
		out = append(out, e.rpcMethod())
	}
	return out
}

// requireDialect fails the test unless every RPC used the given method names
// and A2A-Version header (want "" = no header, the 0.3 way), proving which wire
// dialect a client really spoke.
func (w *wire) requireDialect(t *testing.T, version string, allowed ...string) {
	t.Helper()
	ok := map[string]bool{}
	for _, m := range allowed {
		ok[m] = true
	}
	rpcs := w.rpcs()
	if len(rpcs) == 0 {
		t.Errorf("no JSON-RPC request was recorded")
	}
	for _, e := range rpcs {
		if m := e.rpcMethod(); !ok[m] {
			t.Errorf("RPC method %q is not one of the %q dialect's %v", m, version, allowed)
		}
		if got := e.ReqHeader.Get("A2A-Version"); got != version {
			t.Errorf("%s sent A2A-Version %q, want %q", e.rpcMethod(), got, version)
		}
	}
}

// dump renders every exchange, request and response bytes, for the report.
func (w *wire) dump() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "---- wire log: %d exchange(s) ----\n", len(w.exchanges))
	for i, e := range w.exchanges {
		fmt.Fprintf(&b, "#%d %s %s\n", i+1, e.Method, e.URL)
		for _, h := range []string{"A2A-Version", "Accept", "Content-Type", "Last-Event-ID", "Authorization"} {
			if v := e.ReqHeader.Get(h); v != "" {
				fmt.Fprintf(&b, "   > %s: %s\n", h, v)
			}
		}
		if len(e.ReqBody) > 0 {
			fmt.Fprintf(&b, "   > %s\n", e.ReqBody)
		}
		if e.Err != nil {
			fmt.Fprintf(&b, "   < transport error: %v\n", e.Err)
			continue
		}
		fmt.Fprintf(&b, "   < %d\n", e.Status)
		for _, h := range []string{"Content-Type", "Vary", "ETag"} {
			if v := e.RespHeader.Get(h); v != "" {
				fmt.Fprintf(&b, "   < %s: %s\n", h, v)
			}
		}
		body := e.RespBody()
		if len(body) > 8192 {
			body = append(body[:8192], "…(truncated)"...)
		}
		for _, line := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
			fmt.Fprintf(&b, "   < %s\n", line)
		}
	}
	return b.String()
}
