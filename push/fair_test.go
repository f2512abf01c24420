package push

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// stuck is a receiver that never answers: each request waits until its
// client gives up (or the test ends). It records how many it holds at
// once, at most.
type stuck struct {
	url       string
	now, peak atomic.Int32
}

// listenOn starts h on ip (a loopback address of its own, so that each
// receiver is a host of its own), closed when the test ends.
func listenOn(t *testing.T, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func newStuck(t *testing.T, ip string) *stuck {
	s := &stuck{}
	stop := make(chan struct{})
	srv := listenOn(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.now.Add(1)
		for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
		}
		defer s.now.Add(-1)
		// The server hears the client go only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	// Cleanups run last first: the handlers end before the server waits
	// for them.
	t.Cleanup(func() { close(stop) })
	s.url = srv.URL + "/hook"
	return s
}

// fast is a receiver that answers at once and tells when it got a body.
func newFast(t *testing.T, ip string) (string, chan string) {
	got := make(chan string, 100)
	srv := listenOn(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(buf)
		got <- string(buf)
	}))
	return srv.URL + "/hook", got
}

// loopClient reaches every loopback address.
func loopClient(t *testing.T) *http.Client {
	g, err := NewGuard([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	return NewClient(g)
}

// slowNotice is one delivery to url that takes timeout × attempts when
// the receiver never answers.
func slowNotice(url string, c *http.Client, timeout time.Duration, attempts int) Notice {
	return func(context.Context) []Delivery {
		return []Delivery{{TaskID: "t", ConfigID: "c", URL: url, Body: []byte("slow"), Client: c, Timeout: timeout, MaxAttempts: attempts}}
	}
}

// arrival is how long after start body reached got; it fails the test
// past limit.
func arrival(t *testing.T, got chan string, body string, start time.Time, limit time.Duration) time.Duration {
	t.Helper()
	select {
	case b := <-got:
		if b != body {
			t.Fatalf("delivered %q, want %q", b, body)
		}
		return time.Since(start)
	case <-time.After(limit):
		t.Fatalf("%q not delivered within %s", body, limit)
		return 0
	}
}

// The scenario: one owner's 64 sends to receivers that never
// answer (2s × 3 attempts each) hold at most a quarter of the workers
// (8 of 32); another owner's notice to a fast receiver goes out at once,
// not after a wave of 6-second deliveries. The slow receivers are eight
// hosts, so that no host's share is what holds the owner back.
func TestSlowOwnerLeavesWorkers(t *testing.T) {
	c := loopClient(t)
	var slow []*stuck
	for i := range 8 {
		slow = append(slow, newStuck(t, "127.0.0."+strconv.Itoa(10+i)))
	}
	fastURL, got := newFast(t, "127.0.0.2")
	d := New(Options{Backoff: 500 * time.Millisecond})
	defer d.Close()
	for i := range 64 {
		if !d.EnqueueHandoff("mallory", "m"+strconv.Itoa(i), slowNotice(slow[i%8].url, c, 2*time.Second, 3), nil) {
			t.Fatalf("send %d dropped", i)
		}
	}
	waitHeld(t, slow, 8)
	start := time.Now()
	d.EnqueueHandoff("alice", "a", notice(fastURL, c, 1, "alice's"), nil)
	took := arrival(t, got, "alice's", start, 1500*time.Millisecond)
	t.Logf("alice's notice delivered %s after it was queued (mallory's deliveries: 2s × 3 attempts each, 64 of them)", took)
	time.Sleep(200 * time.Millisecond)
	if n := held(slow); n != 8 {
		t.Fatalf("mallory's deliveries under way: %d, want OwnerWorkers (8)", n)
	}
}

// Many owners' configs for one slow host hold at most a quarter of the
// workers (HostWorkers, 8 of 32) there; another owner's notice to
// another host goes out at once. The tasks waiting on the host hold no
// worker.
func TestSlowHostLeavesWorkers(t *testing.T) {
	c := loopClient(t)
	slow := newStuck(t, "127.0.0.10")
	fastURL, got := newFast(t, "127.0.0.2")
	d := New(Options{Backoff: 500 * time.Millisecond})
	defer d.Close()
	for i := range 64 {
		if !d.EnqueueHandoff("owner"+strconv.Itoa(i), "m"+strconv.Itoa(i), slowNotice(slow.url, c, 2*time.Second, 3), nil) {
			t.Fatalf("send %d dropped", i)
		}
	}
	waitHeld(t, []*stuck{slow}, 8)
	start := time.Now()
	d.EnqueueHandoff("alice", "a", notice(fastURL, c, 1, "alice's"), nil)
	took := arrival(t, got, "alice's", start, 1500*time.Millisecond)
	t.Logf("alice's notice delivered %s after it was queued (64 owners' deliveries to one host that never answers)", took)
	time.Sleep(200 * time.Millisecond)
	if n := slow.peak.Load(); n != 8 {
		t.Fatalf("deliveries under way at the slow host, at most: %d, want HostWorkers (8)", n)
	}
}

// held is how many requests the receivers hold now.
func held(rs []*stuck) int {
	n := 0
	for _, r := range rs {
		n += int(r.now.Load())
	}
	return n
}

// waitHeld waits until the receivers hold n requests at once.
func waitHeld(t *testing.T, rs []*stuck, n int) {
	t.Helper()
	for range 500 {
		if held(rs) == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the slow receivers hold %d requests, want %d", held(rs), n)
}

// Neither one owner nor one receiver host fills the queue: with
// MaxQueued 100, an owner gets 25 notices in, another owner still gets
// its in; the tasks waiting on one host get 25 in all, and a task of
// another owner still gets its in.
func TestQueueShares(t *testing.T) {
	c := loopClient(t)
	slow := newStuck(t, "127.0.0.10")
	o := &outcomes{n: map[Outcome]int{}}
	d := New(Options{Workers: 4, MaxQueued: 100, Observe: o.observe})
	defer d.Close()
	accepted := 0
	for i := range 1000 {
		if d.EnqueueHandoff("mallory", "m"+strconv.Itoa(i), slowNotice(slow.url, c, time.Hour, 1), nil) {
			accepted++
		}
	}
	if accepted != 25 {
		t.Fatalf("one owner got %d notices in, want OwnerQueued (25)", accepted)
	}
	if !d.EnqueueHandoff("alice", "a", notice(slow.url, c, 1, "x"), nil) {
		t.Fatal("another owner's notice dropped")
	}
	if got := o.get()[Dropped]; got != 975 {
		t.Fatalf("%d drops observed, want 975", got)
	}

	hosts := New(Options{Workers: 4, MaxQueued: 100})
	defer hosts.Close()
	for i := range 10 {
		hosts.EnqueueHandoff("o"+strconv.Itoa(i), "h"+strconv.Itoa(i), slowNotice(slow.url, c, time.Hour, 1), nil)
	}
	// Each task counts against the host once its delivery is under way
	// or waits for it.
	for i := 0; hostQueued(hosts, hostKey(slow.url)) != 10; i++ {
		if i == 500 {
			t.Fatalf("%d notices count against the slow host, want 10", hostQueued(hosts, hostKey(slow.url)))
		}
		time.Sleep(5 * time.Millisecond)
	}
	accepted = 0
	for i := range 100 {
		if hosts.EnqueueHandoff("o"+strconv.Itoa(i%10), "h"+strconv.Itoa(i%10), slowNotice(slow.url, c, time.Hour, 1), nil) {
			accepted++
		}
	}
	if accepted != 15 {
		t.Fatalf("the host's tasks got %d more notices in, want 15 (HostQueued 25, 10 queued)", accepted)
	}
	if !hosts.EnqueueHandoff("alice", "a", notice(slow.url, c, 1, "x"), nil) {
		t.Fatal("a task not yet waiting on the host was refused")
	}
}

func hostQueued(d *Dispatcher, host string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h := d.hosts[host]; h != nil {
		return h.queued
	}
	return 0
}

// A notice's delivery is bounded as a whole: three configs whose
// receiver never answers (1s × 5 attempts each, 15s and more in all)
// give up when NoticeTime (1.5s) is up, and the task's next notice goes
// out then.
func TestNoticeTimeBound(t *testing.T) {
	c := loopClient(t)
	slow := newStuck(t, "127.0.0.10")
	fastURL, got := newFast(t, "127.0.0.2")
	o := &outcomes{n: map[Outcome]int{}}
	d := New(Options{NoticeTime: 1500 * time.Millisecond, Backoff: 10 * time.Millisecond, Observe: o.observe})
	defer d.Close()
	start := time.Now()
	d.Enqueue("t", func(context.Context) []Delivery {
		var out []Delivery
		for i := range 3 {
			out = append(out, Delivery{TaskID: "t", ConfigID: "c" + strconv.Itoa(i), URL: slow.url, Body: []byte("slow"), Client: c, Timeout: time.Second, MaxAttempts: 5})
		}
		return out
	})
	d.Enqueue("t", notice(fastURL, c, 1, "next"))
	took := arrival(t, got, "next", start, 5*time.Second)
	t.Logf("the task's next notice delivered %s after the stuck one was queued (its three deliveries: 1s × 5 attempts each)", took)
	if took < 1400*time.Millisecond {
		t.Fatalf("the next notice came %s after the first, before the first's time was up", took)
	}
	waitIdle(t, d)
	got2 := o.get()
	delete(got2, Retried)
	if want := map[Outcome]int{Failed: 3, Delivered: 1}; !maps.Equal(got2, want) {
		t.Fatalf("outcomes %v, want %v (and retries)", got2, want)
	}
}

// Shares keep each task's order: tasks of three owners, all for one
// receiver host that takes two deliveries at a time (so most wait on
// it, without a worker, and take turns again), each get their notices
// in the order they were queued, and every notice arrives once.
func TestSharesKeepOrder(t *testing.T) {
	url, got := newFast(t, "127.0.0.2")
	c := loopClient(t)
	d := New(Options{Workers: 8})
	defer d.Close()
	const tasks, each = 12, 30
	for i := range each {
		for k := range tasks {
			body := strconv.Itoa(k) + ":" + strconv.Itoa(i)
			if !d.EnqueueHandoff("o"+strconv.Itoa(k%3), "t"+strconv.Itoa(k), notice(url, c, 1, body), nil) {
				t.Fatalf("%s dropped", body)
			}
		}
	}
	next := make([]int, tasks)
	for range tasks * each {
		var b string
		select {
		case b = <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("deliveries stopped; next per task: %v", next)
		}
		var k, i int
		if _, err := fmt.Sscanf(b, "%d:%d", &k, &i); err != nil {
			t.Fatal(b)
		}
		if i != next[k] {
			t.Fatalf("task %d got notice %d, want %d", k, i, next[k])
		}
		next[k]++
	}
	waitIdle(t, d)
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.tasks) != 0 || len(d.owners) != 0 || len(d.hosts) != 0 || len(d.turns) != 0 {
		t.Fatalf("left behind: %d tasks, %d owners, %d hosts, %d turns", len(d.tasks), len(d.owners), len(d.hosts), len(d.turns))
	}
}
