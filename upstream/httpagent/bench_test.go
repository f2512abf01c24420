package httpagent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

func benchRequest() *upstream.RunRequest {
	r := req(text(strings.Repeat("What is the weather in Paris tomorrow? ", 4)))
	r.User = "alice"
	r.Metadata = json.RawMessage(`{"trace":"abc"}`)
	r.History = []protocol.Message{
		{Role: protocol.RoleUser, Parts: []protocol.Part{text("hi")}},
		{Role: protocol.RoleAgent, Parts: []protocol.Part{text("Hello! How can I help?"), data(`{"suggest":["weather","news"]}`)}},
	}
	return r
}

// BenchmarkRequestBody is the body encoder alone, reusing its buffer.
func BenchmarkRequestBody(b *testing.B) {
	r := benchRequest()
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = appendRequestBody(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkRequestBodyEncodingJSON is the encoding/json baseline.
func BenchmarkRequestBodyEncodingJSON(b *testing.B) {
	r := benchRequest()
	t := &testing.T{}
	b.ReportAllocs()
	for b.Loop() {
		referenceBody(t, r)
	}
}

// BenchmarkPlainRoundTrip is one whole run against a plain-text agent.
func BenchmarkPlainRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Sunny, 24°C.")
	}))
	defer srv.Close()
	a, err := New(Config{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	r := benchRequest()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := a.Run(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
}

// BenchmarkParseNDJSON parses a stream of text chunks.
func BenchmarkParseNDJSON(b *testing.B) {
	body := strings.Repeat(`{"text":"token "}`+"\n", 100) + `{"status":"completed"}` + "\n"
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p := newEventParser(strings.NewReader(body), false, DefaultMaxEventBytes, defaultRules)
		for {
			if _, err := p.next(); err != nil {
				break
			}
		}
	}
}
