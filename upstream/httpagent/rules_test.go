package httpagent

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// nested is a JSON array nested depth levels deep.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// gzipped compresses s.
func gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, s)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAgentOutputRules: through the real Agent, an answer that breaks
// a rule callers are held to, or that a client could not safely take,
// ends the run with ErrBadOutput naming the rule and the field, and the
// same answer within the rule passes. Each case is a pair: at the
// rule's edge (want "" ) and just past it.
func TestAgentOutputRules(t *testing.T) {
	ndjson := func(lines ...string) http.HandlerFunc {
		return streamOf("application/x-ndjson", strings.Join(lines, "\n")+"\n")
	}
	file := func(members string) string { return `{"file":{` + members + `}}` }
	small := func(c *Config) {
		c.Limits = protocol.Limits{MaxParts: 2, MaxTextBytes: 10, MaxFileBytes: 2}
	}
	for _, tc := range []struct {
		name  string
		serve http.HandlerFunc
		cfg   func(*Config)
		// want is a fragment of the error; "" means the run succeeds.
		want string
	}{
		// Nesting: the whole object the agent sent counts, as a caller's
		// whole body does; the default is max_json_depth's 32.
		{"plain json at the depth limit", reply("application/json", "", nested(32)), nil, ""},
		{"plain json over the depth limit", reply("application/json", "", nested(33)), nil, "answer nests 33 levels deep, over the max_json_depth limit of 32"},
		{"plain json 5000 deep", reply("application/json", "", nested(5000)), nil, "answer nests 5000 levels deep"},
		{"data event at the depth limit", ndjson(`{"data":` + nested(31) + `}`), nil, ""},
		{"data event over the depth limit", ndjson(`{"data":` + nested(32) + `}`), nil, "event nests 33 levels deep"},
		{"artifact over the depth limit", ndjson(`{"artifact":{"parts":[{"data":` + nested(29) + `}]}}`), nil, "event nests 33 levels deep"},
		{"configured depth", ndjson(`{"data":` + nested(8) + `}`), func(c *Config) { c.MaxJSONDepth = 8 }, "event nests 9 levels deep, over the max_json_depth limit of 8"},

		// Media types.
		{"media type", ndjson(file(`"uri":"https://x/y","mimeType":"text/plain; charset=utf-8"`)), nil, ""},
		{"media type with CR LF", ndjson(file(`"uri":"https://x/y","mimeType":"text/html\r\nSet-Cookie: a=b"`)), nil, "mediaType: must be a media type"},
		{"media type with a control character in a parameter", ndjson(file(`"uri":"https://x/y","mimeType":"text/plain; a=\"x\u0001y\""`)), nil, "mediaType: must be a media type"},
		{"not a media type", ndjson(file(`"bytes":"aGk=","mimeType":"html"`)), nil, "mediaType: must be a media type"},

		// File URLs: http(s) and data only.
		{"https url", ndjson(file(`"uri":"HTTPS://Example.com/a.png?x=1#f"`)), nil, ""},
		{"data url", ndjson(file(`"uri":"data:text/plain;base64,aGk="`)), nil, ""},
		{"javascript url", ndjson(file(`"uri":"javascript:alert(document.cookie)"`)), nil, "url: must be an absolute http or https URL"},
		{"file url", ndjson(file(`"uri":"file:///etc/passwd"`)), nil, "url: must be"},
		{"relative url", ndjson(file(`"uri":"../secrets.txt"`)), nil, "url: must be"},
		{"url with user info", ndjson(file(`"uri":"https://bank.example@evil.example/"`)), nil, "url: must be"},
		{"url with a space", ndjson(file(`"uri":"https://x/a b"`)), nil, "url: must be"},
		{"url without host", ndjson(file(`"uri":"http:///x"`)), nil, "url: must be"},
		{"data url without a comma", ndjson(file(`"uri":"data:text/plain"`)), nil, "url: must be"},

		// File names: a base name.
		{"base name", ndjson(file(`"uri":"https://x/y","name":"..report.pdf"`)), nil, ""},
		{"dot-dot name", ndjson(file(`"uri":"https://x/y","name":"../../.bashrc"`)), nil, "filename: must be a base name"},
		{"backslash name", ndjson(file(`"uri":"https://x/y","name":"..\\..\\boot.ini"`)), nil, "filename: must be a base name"},
		{"name ..", ndjson(file(`"uri":"https://x/y","name":".."`)), nil, "filename: must be a base name"},
		{"name with NUL", ndjson(file(`"uri":"https://x/y","name":"a.txt\u0000.exe"`)), nil, "filename: must be a base name"},
		{"artifact part name", ndjson(`{"artifact":{"parts":[{"text":"a"},{"file":{"uri":"https://x/y","name":"/etc/passwd"}}]}}`), nil, "artifact.parts[1].filename: must be a base name"},
		{"plain answer file name", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/pdf")
			w.Header().Set("Content-Disposition", `attachment; filename="../../report.pdf"`)
			io.WriteString(w, "%PDF")
		}, nil, "answer.filename: must be a base name"},

		// Sizes: the limits of a caller's parts.
		{"text chunk at the limit", ndjson(`{"text":"0123456789"}`), small, ""},
		{"text chunk over the limit", ndjson(`{"text":"0123456789a"}`), small, "text: is 11 bytes, over the max_text_size limit of 10 bytes"},
		{"escaped text chunk over the limit", ndjson(`{"text":"012345678\n\n"}`), small, "text: is 11 bytes, over the max_text_size limit"},
		{"status message over the limit", ndjson(`{"status":"completed","message":"0123456789a"}`), small, "message.text: is 11 bytes"},
		// A plain answer is a whole answer, as a stream's merged text is:
		// bounded by the plain-answer size and the task's output limit,
		// not the per-part sizes of what arrives in one piece.
		{"plain text over a part's size", reply("text/plain", "", "0123456789a"), small, ""},
		{"plain json string over a part's size", reply("application/json", "", `"0123456789a"`), small, ""},
		{"file at the limit", ndjson(file(`"bytes":"aGk="`)), small, ""},
		{"file over the limit", ndjson(file(`"bytes":"aGkh"`)), small, "file: is 3 bytes, over the max_file_size limit of 2 bytes"},
		{"plain file over a part's size", reply("image/png", "", "PNG"), small, ""},
		{"artifact parts at the limit", ndjson(`{"artifact":{"parts":[{"text":"a"},{"text":"b"}]}}`), small, ""},
		{"artifact parts over the limit", ndjson(`{"artifact":{"parts":[{"text":"a"},{"text":"b"},{"text":"c"}]}}`), small, "artifact.parts: has more than 2 parts (the max_parts limit)"},

		// Content codings: the module asks for none.
		{"identity coding", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "identity")
			io.WriteString(w, "plain")
		}, nil, ""},
		{"gzip answer not asked for", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipped(t, "hello"))
		}, nil, `Content-Encoding "gzip", which the module did not ask for`},
		{"gzip stream not asked for", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipped(t, `{"text":"hello"}`+"\n"))
		}, nil, `Content-Encoding "gzip"`},
		{"second coding", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header()["Content-Encoding"] = []string{"identity", "identity, br"}
			io.WriteString(w, "x")
		}, nil, `Content-Encoding "br"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mods := []func(*Config){}
			if tc.cfg != nil {
				mods = append(mods, tc.cfg)
			}
			a := newAgent(t, tc.serve, mods...)
			evs, err := collect(t, a, req(text("hi")))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err %v, want none", err)
				}
				return
			}
			if !errors.Is(err, upstream.ErrBadOutput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want upstream.ErrBadOutput with %q", err, tc.want)
			}
			if len(evs) != 0 {
				t.Errorf("events before the refusal: %+v", evs)
			}
		})
	}
}

// TestBadEventEndsTheStream: the events before a bad one are delivered,
// the bad one is not, and nothing after it is read.
func TestBadEventEndsTheStream(t *testing.T) {
	a := newAgent(t, streamOf("application/x-ndjson",
		`{"text":"before"}`+"\n",
		`{"file":{"uri":"javascript:alert(1)"}}`+"\n",
		`{"text":"after"}`+"\n"))
	evs, err := collect(t, a, req(text("hi")))
	if !errors.Is(err, upstream.ErrBadOutput) || !reflect.DeepEqual(evs, []upstream.Event{{Kind: upstream.EventText, Text: "before"}}) {
		t.Fatalf("events %+v err %v", evs, err)
	}
}

// compressingClient asks for gzip and decodes it, as net/http does by
// default (and Caddy's transport with compression on).
func compressingClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxResponseHeaderBytes: DefaultMaxResponseHeaderBytes}}
}

// TestCompressionAskedFor: with a transport that asks for gzip, a gzip
// answer is decoded before anything reads it, and what it decodes to is
// bounded like any answer (a gzip bomb ends the run at the limit).
func TestCompressionAskedFor(t *testing.T) {
	const bomb = 64 << 20 // zeros, about 64 KiB compressed
	zeros := gzipped(t, strings.Repeat("\x00", bomb))
	for _, tc := range []struct {
		name, ct string
		body     []byte
		want     []upstream.Event
		wantErr  error
	}{
		{"plain", "text/plain", gzipped(t, "hello"), []upstream.Event{{Kind: upstream.EventParts, Parts: []protocol.Part{text("hello")}, Whole: true}, {Kind: upstream.EventStatus, State: protocol.StateCompleted}}, nil},
		{"stream", "application/x-ndjson", gzipped(t, `{"text":"hello"}`+"\n"), []upstream.Event{{Kind: upstream.EventText, Text: "hello"}}, nil},
		{"plain bomb", "application/octet-stream", zeros, nil, errBodyTooLarge},
		{"stream bomb", "application/x-ndjson", zeros, nil, ErrEventTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := make(chan string, 1)
			a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				asked <- r.Header.Get("Accept-Encoding")
				w.Header().Set("Content-Type", tc.ct)
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(tc.body)
			}, func(c *Config) { c.Client = compressingClient() })
			evs, err := collect(t, a, req(text("hi")))
			if <-asked != "gzip" {
				t.Fatal("the client did not ask for gzip")
			}
			if !errors.Is(err, tc.wantErr) || !reflect.DeepEqual(evs, tc.want) {
				t.Fatalf("events %+v err %v, want %+v %v", evs, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestDefaultClientAsksForNoCoding: the client New builds asks
// for no content coding, so any the answer has was not asked for.
func TestDefaultClientAsksForNoCoding(t *testing.T) {
	asked := make(chan []string, 1)
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		asked <- r.Header.Values("Accept-Encoding")
		io.WriteString(w, "ok")
	})
	if _, err := collect(t, a, req(text("hi"))); err != nil {
		t.Fatal(err)
	}
	if got := <-asked; len(got) != 0 {
		t.Fatalf("Accept-Encoding %q", got)
	}
}

// TestResponseHeaderCap: the default client reads at most
// DefaultMaxResponseHeaderBytes of response headers, 1xx answers before
// the final one included; an agent past it fails the run.
func TestResponseHeaderCap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve http.HandlerFunc
		fail  bool
	}{
		{"header under the cap", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Pad", strings.Repeat("a", 60<<10))
			io.WriteString(w, "ok")
		}, false},
		{"9 MiB header", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Pad", strings.Repeat("a", 9<<20))
			io.WriteString(w, "ok")
		}, true},
		{"1xx flood", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</"+strings.Repeat("a", 2<<10)+">; rel=preload")
			for range 1000 {
				w.WriteHeader(http.StatusEarlyHints)
			}
			w.Header().Del("Link")
			io.WriteString(w, "ok")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, tc.serve)
			_, err := collect(t, a, req(text("hi")))
			if tc.fail != (err != nil) || tc.fail && !strings.Contains(err.Error(), "response headers exceeded 65536 bytes") {
				t.Fatalf("err %v, want failure %v", err, tc.fail)
			}
		})
	}
}

// TestEndlessLineIsCutOff: a line that never ends is refused at
// MaxEventBytes and the request aborted: the agent's writes start failing
// after a bounded amount, not after all it would send.
func TestEndlessLineIsCutOff(t *testing.T) {
	var written atomic.Int64
	stopped := make(chan struct{})
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(stopped)
		w.Header().Set("Content-Type", "application/x-ndjson")
		chunk := []byte(strings.Repeat("x", 64<<10))
		io.WriteString(w, `{"text":"`)
		for written.Load() < 1<<30 { // 1 GiB: "endless" for this test
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	_, err := collect(t, a, req(text("hi")))
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err %v, want ErrEventTooLarge", err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent was not cut off")
	}
	// The event limit plus what the sockets and buffers between hold.
	if n := written.Load(); n > 64<<20 {
		t.Fatalf("the agent wrote %d bytes before it was cut off", n)
	}
}

// FuzzPlainAnswer feeds arbitrary plain answers (body, Content-Type,
// A2A-Task-State, Content-Disposition) to the plain-answer decoder: it
// must not panic, and what it accepts must be the events of a plain
// answer whose one part passes every output rule.
func FuzzPlainAnswer(f *testing.F) {
	for _, s := range []struct{ body, ct, state, cd string }{
		{"hello", "text/plain; charset=utf-8", "", ""},
		{`{"a":[1,2]}`, "application/json", "", ""},
		{`"a string"`, "application/problem+json", "input-required", ""},
		{nested(32), "application/json", "", ""},
		{nested(33), "application/json", "", ""},
		{"%PDF", "application/pdf", "", `attachment; filename="report.pdf"`},
		{"%PDF", "application/pdf", "", `attachment; filename="../../report.pdf"`},
		{"%PDF", "application/pdf", "", `attachment; filename*=UTF-8''..%2F..%2Fx`},
		{"\x89PNG", "image/png; a=\"\x01\"", "failed", ""},
		{"x", "garbage", "rejected", "inline; filename=\"a\\\\b\""},
		{"", "text/plain", "Auth-Required", ""},
		{"x", "text/plain", "working", ""},
	} {
		f.Add([]byte(s.body), s.ct, s.state, s.cd)
	}
	limits := protocol.Limits{MaxTextBytes: 64, MaxFileBytes: 64}
	small := upstream.NewRules(limits, 16)
	f.Fuzz(func(t *testing.T, body []byte, ct, state, cd string) {
		h := http.Header{}
		h.Set("Content-Type", ct)
		if state != "" {
			h.Set(HeaderTaskState, state)
		}
		if cd != "" {
			h.Set("Content-Disposition", cd)
		}
		mt := plainMediaType(h)
		resp := &http.Response{Header: h, Body: io.NopCloser(bytes.NewReader(body))}
		evs, err := readPlain(resp, mt, 1<<10, small, false)
		if err != nil {
			return
		}
		last := evs[len(evs)-1]
		if last.Kind != upstream.EventStatus || last.State == protocol.StateUnspecified {
			t.Fatalf("last event %+v", last)
		}
		var parts []protocol.Part
		switch {
		case len(evs) == 2 && evs[0].Kind == upstream.EventParts && evs[0].Whole && last.State == protocol.StateCompleted:
			parts = evs[0].Parts
		case len(evs) == 1:
			parts = last.Parts
		default:
			t.Fatalf("events %+v", evs)
		}
		if len(parts) > 1 || (len(parts) == 0) != (len(body) == 0) {
			t.Fatalf("%d parts of a %d-byte body", len(parts), len(body))
		}
		for i := range parts {
			p := &parts[i]
			// A plain answer is the whole answer: its size is bounded by
			// the answer's (1 KiB here), not by the per-part sizes.
			if n := len(p.Text) + len(p.Raw) + len(p.Data); n > 1<<10 {
				t.Fatalf("a part of %d bytes from an answer bounded to 1 KiB", n)
			}
			if e := protocol.CheckOutputPart(p, ""); e != nil {
				t.Fatalf("a part breaking a rule was let through: %v", e)
			}
			if p.Kind == protocol.PartData {
				if d, ok := jsonwire.Valid(p.Data); !ok || d > 16 {
					t.Fatalf("data %q: depth %d valid %v", p.Data, d, ok)
				}
			}
		}
	})
}
