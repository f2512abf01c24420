package push

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver records the bodies it is sent, answering with the statuses of
// codes in turn (200 once they run out).
type receiver struct {
	mu     sync.Mutex
	bodies []string
	codes  []int
	got    chan string
}

func newReceiver(t *testing.T, codes ...int) (*receiver, *httptest.Server) {
	rc := &receiver{codes: codes, got: make(chan string, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(buf)
		rc.mu.Lock()
		code := 200
		if len(rc.codes) > 0 {
			code, rc.codes = rc.codes[0], rc.codes[1:]
		}
		rc.bodies = append(rc.bodies, string(buf))
		rc.mu.Unlock()
		w.WriteHeader(code)
		rc.got <- string(buf)
	}))
	t.Cleanup(srv.Close)
	return rc, srv
}

func testClient(t *testing.T) *http.Client {
	g, err := NewGuard([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return NewClient(g)
}

func notice(url string, c *http.Client, attempts int, bodies ...string) Notice {
	return func(context.Context) []Delivery {
		var out []Delivery
		for _, b := range bodies {
			out = append(out, Delivery{TaskID: "t", ConfigID: "c", URL: url, Body: []byte(b), Client: c, Timeout: time.Second, MaxAttempts: attempts})
		}
		return out
	}
}

func waitN(t *testing.T, rc *receiver, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		select {
		case b := <-rc.got:
			got = append(got, b)
		case <-time.After(5 * time.Second):
			t.Fatalf("%d deliveries, want %d: %q", len(got), n, got)
		}
	}
	return got
}

func TestOrderPerTask(t *testing.T) {
	rc, srv := newReceiver(t)
	d := New(Options{Workers: 4})
	defer d.Close()
	c := testClient(t)
	for i := range 50 {
		d.Enqueue("task-a", notice(srv.URL, c, 1, "a"+strconv.Itoa(i)))
	}
	got := waitN(t, rc, 50)
	for i, b := range got {
		if b != "a"+strconv.Itoa(i) {
			t.Fatalf("delivery %d = %q: out of order: %q", i, b, got)
		}
	}
}

func TestRetriesThenDelivers(t *testing.T) {
	rc, srv := newReceiver(t, 500, 503, 429)
	d := New(Options{Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	defer d.Close()
	d.Enqueue("t", notice(srv.URL, testClient(t), 5, "x"))
	got := waitN(t, rc, 4)
	if got[3] != "x" {
		t.Fatal(got)
	}
	waitIdle(t, d)
}

func TestGivesUpAfterMaxAttempts(t *testing.T) {
	rc, srv := newReceiver(t, 500, 500, 500, 500, 500, 500)
	d := New(Options{Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	defer d.Close()
	d.Enqueue("t", notice(srv.URL, testClient(t), 3, "x"))
	waitN(t, rc, 3)
	waitIdle(t, d)
	select {
	case b := <-rc.got:
		t.Fatalf("a fourth attempt: %q", b)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestClientErrorStops(t *testing.T) {
	rc, srv := newReceiver(t, 400, 200)
	d := New(Options{Backoff: time.Millisecond})
	defer d.Close()
	d.Enqueue("t", notice(srv.URL, testClient(t), 5, "x"))
	d.Enqueue("t", notice(srv.URL, testClient(t), 5, "y"))
	got := waitN(t, rc, 2)
	if got[0] != "x" || got[1] != "y" {
		t.Fatalf("a 400 was retried: %q", got)
	}
}

func TestClaimRefusedSkips(t *testing.T) {
	rc, srv := newReceiver(t)
	d := New(Options{})
	defer d.Close()
	c := testClient(t)
	d.Enqueue("t", func(context.Context) []Delivery {
		return []Delivery{
			{URL: srv.URL, Body: []byte("claimed-elsewhere"), Client: c, Timeout: time.Second, Claim: func(context.Context) (bool, error) { return false, nil }},
			{URL: srv.URL, Body: []byte("mine"), Client: c, Timeout: time.Second, Claim: func(context.Context) (bool, error) { return true, nil }},
		}
	})
	if got := waitN(t, rc, 1); got[0] != "mine" {
		t.Fatal(got)
	}
}

// A receiver that is down holds no more goroutines than the workers and
// no more notices than MaxQueued (eight owners' notices, so that no
// owner's share is what fills it); Close drops and counts the rest.
func TestBoundedWhenReceiverDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	url := srv.URL
	srv.Close()
	base := runtime.NumGoroutine()
	d := New(Options{Workers: 4, MaxQueued: 100, Backoff: time.Hour})
	c := testClient(t)
	accepted := 0
	for i := range 1000 {
		if d.EnqueueHandoff("o"+strconv.Itoa(i%8), "t"+strconv.Itoa(i), notice(url, c, 5, "x"), nil) {
			accepted++
		}
	}
	if accepted != 100 {
		t.Fatalf("accepted %d notices, want MaxQueued (100)", accepted)
	}
	time.Sleep(50 * time.Millisecond)
	if n := runtime.NumGoroutine() - base; n > 4+8 {
		t.Fatalf("%d goroutines more than before, want about 4 workers", n)
	}
	if dropped, handoffs := d.Close(); dropped != 100 || len(handoffs) != 0 {
		t.Fatalf("Close dropped %d (handoffs %d), want 100 (0: none could be handed off)", dropped, len(handoffs))
	}
	if d.Enqueue("t", notice(url, c, 1, "x")) {
		t.Fatal("a closed dispatcher took a notice")
	}
}

func waitIdle(t *testing.T, d *Dispatcher) {
	t.Helper()
	for range 500 {
		if d.Pending() == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%d notices still pending", d.Pending())
}

// Close hands off what it cuts short and what waits, each task's in
// order: the notice being delivered first.
func TestCloseHandsOff(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	d := New(Options{Workers: 1, Backoff: time.Hour})
	c := testClient(t)
	for i := range 3 {
		b := "n" + strconv.Itoa(i)
		d.EnqueueHandoff("", "t", notice(srv.URL, c, 5, b), func() []byte { return []byte(b) })
	}
	d.Enqueue("u", notice(srv.URL, c, 5, "plain"))
	time.Sleep(100 * time.Millisecond) // the first notice is in its backoff
	dropped, handoffs := d.Close()
	if dropped != 4 {
		t.Fatalf("dropped %d, want 4", dropped)
	}
	var got []string
	for _, h := range handoffs {
		got = append(got, string(h))
	}
	if strings.Join(got, ",") != "n0,n1,n2" {
		t.Fatalf("handoffs %q, want n0,n1,n2", got)
	}
}

// outcomes counts what a dispatcher tells Observe.
type outcomes struct {
	mu sync.Mutex
	n  map[Outcome]int
}

func (o *outcomes) observe(x Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[x]++
}

func (o *outcomes) get() map[Outcome]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

// Observe hears each retry and each delivery's end: two retries then a
// delivery; three failed attempts of three, then a give-up; a 400 given
// up at once; and a notice the full queue drops.
func TestObserveOutcomes(t *testing.T) {
	rc, srv := newReceiver(t, 500, 503, 200, 500, 500, 500, 400)
	o := &outcomes{n: map[Outcome]int{}}
	d := New(Options{Workers: 1, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Observe: o.observe})
	defer d.Close()
	c := testClient(t)
	d.Enqueue("t", notice(srv.URL, c, 5, "a"))
	waitN(t, rc, 3)
	waitIdle(t, d)
	d.Enqueue("t", notice(srv.URL, c, 3, "b"))
	waitN(t, rc, 3)
	waitIdle(t, d)
	d.Enqueue("t", notice(srv.URL, c, 3, "c"))
	waitN(t, rc, 1)
	waitIdle(t, d)
	want := map[Outcome]int{Retried: 4, Delivered: 1, Failed: 2}
	if got := o.get(); !maps.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}

	full := New(Options{Workers: 1, MaxQueued: 1, Backoff: time.Hour, Observe: o.observe})
	defer full.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer down.Close()
	full.Enqueue("u", notice(down.URL, c, 5, "held"))
	if full.Enqueue("v", notice(down.URL, c, 5, "dropped")) {
		t.Fatal("a full queue took a notice")
	}
	if got := o.get()[Dropped]; got != 1 {
		t.Fatalf("%d drops observed, want 1", got)
	}
}
