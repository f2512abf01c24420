package httpagent

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

func TestParseEventShapes(t *testing.T) {
	ok := []struct {
		in    string
		want  upstream.Event
		final bool
	}{
		{`{"text":""}`, upstream.Event{Kind: upstream.EventText}, false},
		{`{"text":"a\u00e9"}`, upstream.Event{Kind: upstream.EventText, Text: "aé"}, false},
		{`{"data":null}`, upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{data(`null`)}}, false},
		{`{"data":[1,{"x":"y"}]}`, upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{data(`[1,{"x":"y"}]`)}}, false},
		{`{"file":{"bytes":"aGk","name":"n"}}`, upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartFile, Raw: []byte("hi"), Filename: "n"}}}, false},
		{`{"file":{"bytes":"-_8="}}`, upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartFile, Raw: []byte{0xfb, 0xff}}}}, false},
		{`{"artifact":{"parts":[{"data":1}]}}`, upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{Parts: []protocol.Part{data(`1`)}}}, false},
		{`{"status":"working"}`, upstream.Event{Kind: upstream.EventStatus, State: protocol.StateWorking}, false},
		{`{"message":"m","status":"auth-required"}`, upstream.Event{Kind: upstream.EventStatus, State: protocol.StateAuthRequired, Parts: []protocol.Part{text("m")}}, true},
		{`{"status":"rejected"}`, upstream.Event{Kind: upstream.EventStatus, State: protocol.StateRejected}, true},
		{`{"error":""}`, upstream.Event{Kind: upstream.EventStatus, State: protocol.StateFailed}, true},
	}
	for _, tc := range ok {
		ev, final, err := parseEvent([]byte(tc.in), defaultRules)
		if err != nil || final != tc.final || !reflect.DeepEqual(ev, tc.want) {
			t.Errorf("%s: %+v final=%v err=%v; want %+v final=%v", tc.in, ev, final, err, tc.want, tc.final)
		}
	}
	bad := []string{
		`null`, `[]`, `"text"`, `{}`, `{"text":null}`, `{"text":1}`, `{"text":"a","data":1}`,
		`{"text":"a","extra":1}`, `{"status":"canceled"}`, `{"status":"submitted"}`, `{"status":"Working"}`,
		`{"status":"working","message":null}`, `{"status":"working","message":1}`, `{"status":"working","text":"a"}`,
		`{"error":{"code":1}}`, `{"error":"x","status":"failed"}`,
		`{"file":{}}`, `{"file":null}`, `{"file":{"uri":""}}`, `{"file":{"uri":"a","bytes":"aGk="}}`,
		`{"file":{"bytes":"%%%"}}`, `{"file":{"uri":"a","size":1}}`, `{"file":"a"}`,
		`{"artifact":{"name":"x"}}`, `{"artifact":{"name":"x","parts":[]}}`, `{"artifact":{"parts":[{}]}}`,
		`{"artifact":{"parts":[{"text":"a","data":1}]}}`, `{"artifact":{"parts":[{"image":"a"}]}}`,
		`{"artifact":{"parts":[{"text":"a"}],"metadata":{}}}`, `{"artifact":null}`,
		// Not UTF-8: not JSON (RFC 8259), as a caller's body like it is -32700.
		"{\"data\":{\"\x80\":[0]}}", "{\"data\":\"\xff\"}", "{\"text\":\"caf\xc3\xa9 \xff\"}",
		"{\"artifact\":{\"parts\":[{\"data\":[\"\xc3\"]}]}}",
	}
	for _, in := range bad {
		if ev, _, err := parseEvent([]byte(in), defaultRules); err == nil {
			t.Errorf("%s accepted as %+v", in, ev)
		}
	}
}

func parseAll(t *testing.T, r io.Reader, sse bool, max int) ([]upstream.Event, error) {
	p := newEventParser(r, sse, max, defaultRules)
	var evs []upstream.Event
	for range 1000 {
		ev, err := p.next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatal("parser does not end")
	return nil, nil
}

// The parser must not depend on how the input is split into reads.
func TestParserReadSplitting(t *testing.T) {
	inputs := []struct {
		sse  bool
		body string
	}{
		{false, "\xEF\xBB\xBF{\"text\":\"a\"}\r\n\n{\"text\":\"b\"}\n{\"status\":\"completed\"}\n"},
		{true, "\xEF\xBB\xBFdata: {\"text\":\"a\"}\r\n\r\n:c\rdata:{\"text\":\"b\"}\r\rdata: {\"status\":\r\ndata:\"completed\"}\n\n"},
	}
	want := []upstream.Event{{Kind: upstream.EventText, Text: "a"}, {Kind: upstream.EventText, Text: "b"}, {Kind: upstream.EventStatus, State: protocol.StateCompleted}}
	for _, in := range inputs {
		for _, wrap := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
			iotest.HalfReader,
			iotest.DataErrReader,
		} {
			evs, err := parseAll(t, wrap(strings.NewReader(in.body)), in.sse, 1024)
			if err != nil || !reflect.DeepEqual(evs, want) {
				t.Errorf("sse=%v: %+v %v", in.sse, evs, err)
			}
		}
	}
}

func TestParserReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(`{"text":"a"}`+"\n"+`{"text"`), iotest.ErrReader(boom))
	evs, err := parseAll(t, r, false, 1024)
	if len(evs) != 1 || !errors.Is(err, boom) {
		t.Errorf("%+v %v", evs, err)
	}
}

// FuzzParseEvents feeds arbitrary bytes to both stream parsers: they must
// not panic, must end, must stop after a final status, and must yield only
// well-formed events.
func FuzzParseEvents(f *testing.F) {
	seeds := []string{
		`{"text":"a"}` + "\n" + `{"status":"completed"}` + "\n",
		`{"data":{"k":[1,2]}}` + "\n\n" + `{"file":{"uri":"u","mimeType":"t"}}`,
		`{"artifact":{"name":"n","parts":[{"text":"x"},{"file":{"bytes":"aGk="}}]}}` + "\r\n",
		`{"status":"working","message":"m"}` + "\n" + `{"error":"e"}` + "\n" + `{"text":"after"}`,
		"data: {\"text\":\ndata: \"a\"}\n\n: comment\nevent: x\nid: 1\n\n",
		"data: {\"status\":\"input-required\"}\r\rdata: {\"text\":\"b\"}\r\n\r\n",
		"data: {\"text\":\"unterminated\"}\n",
		"\xEF\xBB\xBF{\"text\":\"bom\"}\n",
		`{"te`,
		"\x00\xff\n\n",
		// Near misses of the output rules.
		`{"data":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}` + "\n",
		`{"file":{"uri":"https://x/y","mimeType":"text/html\r\nX: 1"}}` + "\n",
		`{"file":{"uri":"javascript:alert(1)"}}` + "\n" + `{"file":{"uri":"data:,hi","name":"../a"}}`,
		`{"artifact":{"parts":[{"file":{"bytes":"aGk=","name":"a\\b","mimeType":"a/b; c=\"\u0001\""}}]}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Add([]byte("{\"text\":\"caf\xc3\xa9 \xff\"}"), false)
	f.Fuzz(func(t *testing.T, in []byte, sse bool) {
		// The {"text":…} fast path agrees with the general decoder.
		if s, ok := plainTextEvent(in); ok {
			ev, _, err := parseEventSlow(in, defaultRules)
			if err != nil || ev.Kind != upstream.EventText || ev.Text != s {
				t.Fatalf("fast path %q, general %+v %v", s, ev, err)
			}
		}
		p := newEventParser(bytes.NewReader(in), sse, 256, defaultRules)
		for n := 0; ; n++ {
			if n > len(in)+1 {
				t.Fatalf("more events (%d) than input bytes", n)
			}
			ev, err := p.next()
			if err != nil {
				if _, err2 := p.next(); err == io.EOF && err2 != io.EOF {
					t.Fatalf("next after EOF: %v", err2)
				}
				return
			}
			switch ev.Kind {
			case upstream.EventText:
			case upstream.EventParts:
				if len(ev.Parts) != 1 {
					t.Fatalf("parts event with %d parts", len(ev.Parts))
				}
			case upstream.EventArtifact:
				if ev.Artifact == nil || len(ev.Artifact.Parts) == 0 {
					t.Fatal("artifact event without parts")
				}
			case upstream.EventStatus:
				if ev.State == protocol.StateUnspecified {
					t.Fatal("status event without state")
				}
				if p.finished != (ev.State != protocol.StateWorking) {
					t.Fatalf("state %v, finished %v", ev.State, p.finished)
				}
			default:
				t.Fatalf("event of kind %d", ev.Kind)
			}
			parts := ev.Parts
			if ev.Artifact != nil {
				parts = ev.Artifact.Parts
			}
			for _, part := range parts {
				checkYielded(t, &part)
			}
		}
	})
}

// checkYielded fails t unless p is a part the rules let through: of a
// known kind, within the limits, a client-safe media type, URL and name,
// and data nested within the depth limit (its event had one level more).
func checkYielded(t *testing.T, p *protocol.Part) {
	t.Helper()
	if p.Kind < protocol.PartText || p.Kind > protocol.PartFile {
		t.Fatalf("part of kind %d", p.Kind)
	}
	if e := (protocol.Limits{}).CheckPart(p, ""); e != nil {
		t.Fatalf("a part over a limit was let through: %v", e)
	}
	if e := protocol.CheckOutputPart(p, ""); e != nil {
		t.Fatalf("a part breaking a rule was let through: %v", e)
	}
	if p.Kind == protocol.PartData {
		if d, ok := jsonwire.Valid(p.Data); !ok || d >= protocol.DefaultMaxDepth {
			t.Fatalf("data %q: depth %d valid %v", p.Data, d, ok)
		}
	}
}

// defaultRules hold an answer to the default limits.
var defaultRules = upstream.NewRules(protocol.Limits{}, 0)
