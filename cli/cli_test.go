package cli

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestCardURLs(t *testing.T) {
	for _, c := range []struct {
		given string
		want  []string
	}{
		{"http://h:1", []string{"http://h:1/.well-known/agent-card.json"}},
		{"http://h:1/", []string{"http://h:1/.well-known/agent-card.json"}},
		{"https://h/a2a?x=1#f", []string{"https://h/a2a/.well-known/agent-card.json", "https://h/.well-known/agent-card.json"}},
		{"https://h/agents/x/", []string{"https://h/agents/x/.well-known/agent-card.json", "https://h/.well-known/agent-card.json"}},
		{"http://h/cards/mine.json", []string{"http://h/cards/mine.json"}},
	} {
		got, err := cardURLs(c.given)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("cardURLs(%q) = %q, %v; want %q", c.given, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "h:1", "ftp://h/", "http://", "/a2a"} {
		if _, err := cardURLs(bad); err == nil {
			t.Errorf("cardURLs(%q) took it", bad)
		}
	}
}

// chunked reads its string a few bytes at a time, so frames are cut
// across reads.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.s))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

func (c *chunked) Close() error { return nil }

func TestFrameReader(t *testing.T) {
	for _, c := range []struct {
		name, body string
		sse        bool
		want       []string
	}{
		{"sse", "id: 1\ndata: {\"a\":1}\n\n: comment\nevent: x\ndata: {\"b\":\ndata:2}\n data: ignored\n\n", true, []string{`{"a":1}`, "{\"b\":\n2}"}},
		{"sse crlf and no final blank line", "data:{\"a\":1}\r\n\r\ndata: last", true, []string{`{"a":1}`, "last"}},
		{"sse event without data", "event: ping\n\n", true, nil},
		{"plain body", `{"jsonrpc":"2.0","id":1,"result":{}}`, false, []string{`{"jsonrpc":"2.0","id":1,"result":{}}`}},
		{"empty body", "", false, nil},
	} {
		for _, n := range []int{1, 3, 1 << 10} {
			var got []string
			w := &wire{onFrame: func(b []byte) { got = append(got, string(b)) }}
			f := &frameReader{rc: &chunked{c.body, n}, w: w, sse: c.sse}
			all, err := io.ReadAll(f)
			f.Close()
			if err != nil || string(all) != c.body {
				t.Fatalf("%s: the body was changed: %q, %v", c.name, all, err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s, %d-byte reads: frames %q, want %q", c.name, n, got, c.want)
			}
		}
	}
}

// TestFrameCut: a frame over maxFrame is kept up to where it outgrew the
// bound, marked, and the next frame is whole again.
func TestFrameCut(t *testing.T) {
	big := strings.Repeat("x", maxFrame-10)
	body := "data: " + big + "0123456789ABCDEF\n\ndata: next\n\n"
	var got []string
	w := &wire{onFrame: func(b []byte) { got = append(got, string(b)) }}
	f := &frameReader{rc: &chunked{body, 1 << 20}, w: w, sse: true}
	if all, _ := io.ReadAll(f); string(all) != body {
		t.Fatal("the body was changed")
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "xxx") || !strings.HasSuffix(got[0], " …(cut: over 8MiB)") ||
		len(got[0]) > maxFrame+len(" …(cut: over 8MiB)") || strings.Contains(got[0], "ABCDEF") || got[1] != "next" {
		t.Fatalf("frames: %d, first ends %q, second %q", len(got), got[0][max(0, len(got[0])-30):], got[len(got)-1])
	}
}

func TestWireError(t *testing.T) {
	for _, c := range []struct {
		frame, code, msg string
		ok               bool
	}{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found","data":[]}}`, "-32001", "Task not found", true},
		{`{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[]}}`, "404 NOT_FOUND", "Task not found", true},
		{`{"code":5,"message":"not found"}`, "5", "not found", true},
		{`{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"completed"}}}`, "", "", false},
		{`<html>`, "", "", false},
		{``, "", "", false},
	} {
		code, msg, ok := wireError([]byte(c.frame))
		if code != c.code || msg != c.msg || ok != c.ok {
			t.Errorf("wireError(%s) = %q, %q, %v; want %q, %q, %v", c.frame, code, msg, ok, c.code, c.msg, c.ok)
		}
	}
}

func TestHeaderFlags(t *testing.T) {
	var o Options
	for _, h := range []string{"X-Api-Key: k1", "authorization:  Bearer t ", "X-Api-Key: k2"} {
		if err := o.AddHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.SetUser("ann:pw:with:colons"); err != nil {
		t.Fatal(err)
	}
	want := http.Header{"X-Api-Key": {"k1", "k2"}, "Authorization": {"Basic YW5uOnB3OndpdGg6Y29sb25z"}}
	if len(o.Header) != len(want) || !slices.Equal(o.Header["X-Api-Key"], want["X-Api-Key"]) || o.Header.Get("Authorization") != want.Get("Authorization") {
		t.Fatalf("headers %v, want %v", o.Header, want)
	}
	for _, bad := range []string{"no colon", ": v", "Bad Name: v", "K: v\r\nX: y"} {
		if err := o.AddHeader(bad); err == nil {
			t.Errorf("AddHeader(%q) took it", bad)
		}
	}
	if err := o.SetUser("nopassword"); err == nil || !strings.Contains(err.Error(), "name:password") {
		t.Errorf("SetUser without a colon: %v", err)
	}
}

func TestParseState(t *testing.T) {
	for in, want := range map[string]string{"working": "TASK_STATE_WORKING", "Input-Required": "TASK_STATE_INPUT_REQUIRED",
		"TASK_STATE_CANCELED": "TASK_STATE_CANCELED", "auth_required": "TASK_STATE_AUTH_REQUIRED"} {
		if got, err := parseState(in); err != nil || string(got) != want {
			t.Errorf("parseState(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "done", "TASK_STATE_UNSPECIFIED"} {
		if _, err := parseState(bad); err == nil {
			t.Errorf("parseState(%q) took it", bad)
		}
	}
}
