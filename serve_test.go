package caddya2a

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestJSONContentType(t *testing.T) {
	tests := map[string]bool{
		"":                                   false,
		"application/json":                   true,
		"application/json; charset=utf-8":    true,
		"Application/JSON":                   true,
		"application/a2a+json":               true,
		"application/a2a+json;charset=UTF-8": true,
		"text/plain":                         false,
		"application/x-www-form-urlencoded":  false,
		"application/jsonx":                  false,
		"application/json;;":                 false,
	}
	for ct, want := range tests {
		if got := jsonContentType(ct); got != want {
			t.Errorf("jsonContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestServeHTTPEnvelope covers the HTTP checks made before the endpoint
// sees a request: they answer with caddyhttp errors Caddy renders.
func TestServeHTTPEnvelope(t *testing.T) {
	h := &Handler{CardPath: DefaultCardPath, RPCPath: DefaultRPCPath, MaxRequestBody: 16}
	h.browser, _ = newBrowserPolicy(nil)
	tests := []struct {
		name    string
		method  string
		path    string
		ct      string
		body    string
		chunked bool
		status  int
		allow   string
		passed  bool
	}{
		{name: "GET on rpc", method: "GET", path: "/a2a", status: 405, allow: "POST, OPTIONS"},
		{name: "PUT on rpc", method: "PUT", path: "/a2a", ct: "application/json", body: "{}", status: 405, allow: "POST, OPTIONS"},
		{name: "POST on card", method: "POST", path: DefaultCardPath, status: 405, allow: "GET, HEAD, OPTIONS"},
		{name: "wrong media type", method: "POST", path: "/a2a", ct: "text/plain", body: "{}", status: 415},
		{name: "no media type", method: "POST", path: "/a2a", body: "{}", status: 415},
		{name: "declared too large", method: "POST", path: "/a2a", ct: "application/json", body: strings.Repeat("x", 17), status: 413},
		{name: "chunked too large", method: "POST", path: "/a2a", ct: "application/json", body: strings.Repeat("x", 17), chunked: true, status: 413},
		{name: "other path passes", method: "GET", path: "/elsewhere", passed: true},
		{name: "rpc prefix is not rpc", method: "GET", path: "/a2a/x", passed: true},
		// rpc_path + "/" is the JSON-RPC endpoint too (TestRPCPathForms);
		// nothing else under rpc_path is.
		{name: "rpc path with a slash is rpc", method: "GET", path: "/a2a/", status: 405, allow: "POST, OPTIONS"},
		{name: "rpc path with two slashes is not rpc", method: "POST", path: "/a2a//", ct: "application/json", body: "{}", passed: true},
		{name: "card path with a slash is not the card", method: "GET", path: DefaultCardPath + "/", passed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "http://h"+tt.path, strings.NewReader(tt.body))
			if tt.ct != "" {
				r.Header.Set("Content-Type", tt.ct)
			}
			if tt.chunked {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil)
			passed := false
			next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
				passed = true
				return nil
			})
			err := h.ServeHTTP(w, r, next)
			if passed != tt.passed {
				t.Fatalf("passed to next = %v, want %v", passed, tt.passed)
			}
			if tt.passed {
				return
			}
			if tt.status == http.StatusUnsupportedMediaType {
				// Written by the module, with the accepted media types.
				if err != nil || w.Code != tt.status || w.Body.String() != mediaTypeRefusal+"\n" {
					t.Fatalf("err = %v, status %d, body %q; want %d %q", err, w.Code, w.Body, tt.status, mediaTypeRefusal)
				}
				return
			}
			var he caddyhttp.HandlerError
			if !errors.As(err, &he) {
				t.Fatalf("err = %v, want a caddyhttp.HandlerError", err)
			}
			if he.StatusCode != tt.status {
				t.Errorf("status = %d, want %d (%v)", he.StatusCode, tt.status, err)
			}
			if got := w.Header().Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
}

// trickle is a request body that yields its bytes and then fails as a
// client that stopped sending would; it records the most room a read gave
// it to fill.
type trickle struct {
	left    int
	maxRoom int
}

func (b *trickle) Read(p []byte) (int, error) {
	b.maxRoom = max(b.maxRoom, cap(p))
	if b.left == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := min(len(p), b.left)
	clear(p[:n])
	b.left -= n
	return n, nil
}

// TestReadBodyGrowsAsBytesArrive: a declared length is a claim, not an
// allocation. A client declaring 4 MiB and sending little makes the
// handler hold little (measured as the buffer it reads into, and as the
// bytes allocated), and a whole body grows to exactly its length.
func TestReadBodyGrowsAsBytesArrive(t *testing.T) {
	const declared = 4 << 20
	h := &Handler{MaxRequestBody: declared}
	tests := []struct {
		name string
		sent int
		// maxRoom bounds the room a read is given (the buffer not yet
		// filled); maxAlloc the bytes readBody allocates in all.
		maxRoom, maxAlloc int
	}{
		{name: "one byte of 4 MiB", sent: 1, maxRoom: exactBodyMax, maxAlloc: 2 * exactBodyMax},
		// Doubling when full: the room never exceeds what arrived.
		{name: "100 KiB of 4 MiB", sent: 100 << 10, maxRoom: 100 << 10, maxAlloc: 4*100<<10 + exactBodyMax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &trickle{left: tt.sent}
			r := httptest.NewRequest("POST", "http://h/a2a", body)
			r.ContentLength = declared
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := h.readBody(httptest.NewRecorder(), r)
			runtime.ReadMemStats(&after)
			var he caddyhttp.HandlerError
			if !errors.As(err, &he) || he.StatusCode != http.StatusBadRequest {
				t.Fatalf("short body: err %v, want a 400", err)
			}
			if body.maxRoom > tt.maxRoom {
				t.Errorf("a read was given room for %d bytes, %d had arrived; want at most %d", body.maxRoom, tt.sent, tt.maxRoom)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > uint64(tt.maxAlloc) {
				t.Errorf("allocated %d bytes for %d that arrived, want at most %d", got, tt.sent, tt.maxAlloc)
			}
		})
	}

	for _, n := range []int{1, 1000, exactBodyMax, exactBodyMax + 1, 100 << 10, declared} {
		data := bytes.Repeat([]byte{'x'}, n)
		r := httptest.NewRequest("POST", "http://h/a2a", bytes.NewReader(data))
		got, err := h.readBody(httptest.NewRecorder(), r)
		if err != nil || !bytes.Equal(got, data) || cap(got) != n {
			t.Fatalf("%d-byte body: len %d cap %d err %v", n, len(got), cap(got), err)
		}
	}

	// A small body stays one allocation of its size.
	small := bytes.Repeat([]byte{'x'}, 300)
	br := bytes.NewReader(small)
	r := httptest.NewRequest("POST", "http://h/a2a", br)
	w := httptest.NewRecorder()
	if allocs := testing.AllocsPerRun(100, func() {
		br.Reset(small)
		if _, err := h.readBody(w, r); err != nil {
			t.Fatal(err)
		}
	}); allocs != 1 {
		t.Errorf("a 300-byte body took %v allocations, want 1", allocs)
	}
}

func TestOwner(t *testing.T) {
	h := &Handler{Owner: "{http.request.header.X-User}"}
	r := httptest.NewRequest("POST", "http://h/a2a", nil)
	// A caller-sent value that looks like a placeholder must stay literal.
	r.Header.Set("X-User", "{env.HOME}")
	w := httptest.NewRecorder()
	r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil)
	if got := h.owner(r); got != "{env.HOME}" {
		t.Errorf("owner = %q, want the literal header value", got)
	}
	h.Owner = DefaultOwner
	if got := h.owner(r); got != "" {
		t.Errorf("owner without auth = %q, want anonymous", got)
	}
}

// TestRPCPathForms: the JSON-RPC endpoint is rpc_path and rpc_path with
// a trailing slash (a client whose base URL is the card's interface URL
// posts to "/" under it); any other path under it goes on.
func TestRPCPathForms(t *testing.T) {
	for _, tc := range []struct {
		rpcPath, path string
		rpc           bool
	}{
		{"/rpc", "/rpc", true}, {"/rpc", "/rpc/", true}, {"/rpc", "/rpcx", false}, {"/rpc", "/rpc/x", false},
		{"/rpc", "/rpc//", false}, {"/rpc", "/", false}, {"/rpc/", "/rpc/", true}, {"/rpc/", "/rpc", true},
		{"/rpc/", "/rp", false}, {"/", "/", true}, {"/", "//", false}, {"/a/b", "/a/b/", true}, {"/a/b", "/a/", false},
	} {
		h := &Handler{RPCPath: tc.rpcPath}
		if got := h.isRPCPath(tc.path); got != tc.rpc {
			t.Errorf("rpc_path %s, path %s: %v, want %v", tc.rpcPath, tc.path, got, tc.rpc)
		}
	}
}
