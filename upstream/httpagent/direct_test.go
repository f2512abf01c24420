package httpagent

import (
	"io"
	"net/http"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// TestDirectAnswers: A2A-Reply: message marks a plain answer and an event
// stream alike; the marker comes first, then the answer's events as
// without it. "task" and no header are today's answer; anything else is
// bad output.
func TestDirectAnswers(t *testing.T) {
	marker := upstream.Event{Kind: upstream.EventMessage}
	completed := upstream.Event{Kind: upstream.EventStatus, State: protocol.StateCompleted}
	whole := upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{text("hi there")}, Whole: true}
	tests := []struct {
		name, reply, ct, state, body string
		want                         []upstream.Event
		wantErr                      string
	}{
		{"plain", "message", "text/plain", "", "hi there", []upstream.Event{marker, whole, completed}, ""},
		{"plain, any case and spaces", " Message ", "text/plain", "", "hi there", []upstream.Event{marker, whole, completed}, ""},
		{"plain with a state", "message", "text/plain", "rejected", "no",
			[]upstream.Event{marker, {Kind: upstream.EventStatus, State: protocol.StateRejected, Parts: []protocol.Part{text("no")}}}, ""},
		{"plain, empty", "message", "text/plain", "", "", []upstream.Event{marker, completed}, ""},
		{"task is the default", "task", "text/plain", "", "hi there", []upstream.Event{whole, completed}, ""},
		{"no header", "", "text/plain", "", "hi there", []upstream.Event{whole, completed}, ""},
		{"ndjson", "message", "application/x-ndjson", "", `{"text":"hi "}` + "\n" + `{"text":"there"}` + "\n",
			[]upstream.Event{marker, {Kind: upstream.EventText, Text: "hi "}, {Kind: upstream.EventText, Text: "there"}}, ""},
		{"sse", "message", "text/event-stream", "", "data: {\"text\":\"hi\"}\n\ndata: {\"status\":\"completed\"}\n\n",
			[]upstream.Event{marker, {Kind: upstream.EventText, Text: "hi"}, completed}, ""},
		{"unknown value", "maybe", "text/plain", "", "x", nil, `unknown A2A-Reply "maybe"`},
		{"unknown value on a stream", "both", "application/x-ndjson", "", `{"text":"x"}` + "\n", nil, `unknown A2A-Reply "both"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.ct)
				if tc.reply != "" {
					w.Header().Set(HeaderReply, tc.reply)
				}
				if tc.state != "" {
					w.Header().Set(HeaderTaskState, tc.state)
				}
				io.WriteString(w, tc.body)
			})
			evs, err := collect(t, a, req(text("hi")))
			wantEvents(t, evs, err, tc.want, tc.wantErr)
		})
	}
}

// TestDirectAnswerReady: a marked stream's marker is in hand before any of
// the stream is read.
func TestDirectAnswerReady(t *testing.T) {
	gate := make(chan struct{})
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set(HeaderReply, "message")
		w.(http.Flusher).Flush()
		<-gate
		io.WriteString(w, `{"text":"late"}`+"\n")
	})
	defer close(gate)
	s, err := a.Run(t.Context(), req(text("hi")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.(upstream.Ready).Ready() {
		t.Error("a marked stream is not ready before its marker")
	}
	if ev, err := s.Next(); err != nil || ev.Kind != upstream.EventMessage {
		t.Fatalf("first event %+v, %v; want the marker", ev, err)
	}
}
