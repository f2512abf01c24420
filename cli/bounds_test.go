package cli

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// endless answers with head, then repeats chunk until the client stops
// reading or limit bytes are served (so that a client without bounds
// ends too), counting what it served.
type endless struct {
	contentType, head, chunk string
	limit                    int64
	served                   atomic.Int64
	done                     chan struct{}
}

func (e *endless) serve(w http.ResponseWriter, r *http.Request) {
	defer close(e.done)
	w.Header().Set("Content-Type", e.contentType)
	n, _ := io.WriteString(w, e.head)
	e.served.Add(int64(n))
	for e.served.Load() < e.limit {
		n, err := io.WriteString(w, e.chunk)
		e.served.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// lowerBounds sets maxAnswer and maxStream to 1 and 4 MiB until the
// test ends: the bounds' work is the same, and under the race detector
// reading 32 MiB of JSON takes seconds.
func lowerBounds(t *testing.T) {
	answer, stream := maxAnswer, maxStream
	maxAnswer, maxStream = 1<<20, 4<<20
	t.Cleanup(func() { maxAnswer, maxStream = answer, stream })
}

// TestEndlessAnswers: an answer that does not end is read up to the
// bound on one answer, one stream event or one stream, no further; the
// command says which bound, and exits 1.
func TestEndlessAnswers(t *testing.T) {
	if maxAnswer != 32<<20 || maxStream != 128<<20 {
		t.Fatalf("the bounds are %d and %d, not as documented", maxAnswer, maxStream)
	}
	lowerBounds(t)
	for _, c := range []struct {
		name   string
		stream bool
		e      *endless
		bound  int64
		err    string
	}{
		{"a JSON string without end", false, &endless{contentType: "application/json",
			head: `{"jsonrpc":"2.0","id":"x","result":{"task":{"id":"`, chunk: strings.Repeat("a", 64<<10), limit: int64(maxAnswer + 64<<20)},
			int64(maxAnswer), "error: the server's answer is over 1 MiB, the bound of the caddy a2a commands: reading stopped\n"},
		{"an SSE event without end", true, &endless{contentType: "text/event-stream",
			chunk: "data: " + strings.Repeat("a", 64<<10) + "\n", limit: int64(maxAnswer + 64<<20)},
			int64(maxAnswer), "error: an event of the server's stream is over 1 MiB, the bound of the caddy a2a commands: reading stopped\n"},
		{"an SSE stream without end", true, &endless{contentType: "text/event-stream",
			chunk: ":" + strings.Repeat("a", 256<<10) + "\n\n", limit: int64(maxStream + 64<<20)},
			int64(maxStream), "error: the server's stream is over 4 MiB, the bound of the caddy a2a commands: reading stopped\n"},
	} {
		c.e.done = make(chan struct{})
		method := "SendMessage"
		if c.stream {
			method = "SendStreamingMessage"
		}
		a := newFakeAgent(t, fakeCard("A", "d", "S"), map[string]http.HandlerFunc{method: c.e.serve})
		r := runCommand(t, nil, func(ctx context.Context, o *Options) int {
			return Send(ctx, o, a.URL, "hi", SendOptions{Stream: c.stream})
		})
		select {
		case <-c.e.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the server is still writing", c.name)
		}
		if r.code != 1 || r.out != "" || r.err != c.err {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1, stderr %q", c.name, r.code, r.out, r.err, c.err)
		}
		// What the server wrote past the bound is at most what the
		// sockets on the way hold.
		if served := c.e.served.Load(); served < c.bound || served > c.bound+16<<20 {
			t.Errorf("%s: %d MiB served, want the bound (%d MiB) and at most 16 MiB more", c.name, served>>20, c.bound>>20)
		}
	}
}

// TestBoundCut: the body reads as ending exactly at the bound, with the
// bound's error, whatever the reads' sizes; nothing is read after it.
func TestBoundCut(t *testing.T) {
	lowerBounds(t)
	for _, n := range []int{1 << 10, 3 << 20} {
		w := &wire{}
		body := strings.Repeat("x", maxAnswer+5<<20)
		f := &frameReader{rc: &chunked{body, n}, w: w}
		got, err := io.Copy(io.Discard, f)
		if got != int64(maxAnswer) || err == nil || err.Error() != "the server's answer is over 1 MiB, the bound of the caddy a2a commands: reading stopped" || w.bound() != err {
			t.Errorf("%d-byte reads: %d bytes, %v", n, got, err)
		}
		if k, again := f.Read(make([]byte, 10)); k != 0 || again != err {
			t.Errorf("a read after the bound: %d, %v", k, again)
		}
		if w.last() != nil {
			t.Errorf("the cut answer was kept as a frame")
		}
	}
}
