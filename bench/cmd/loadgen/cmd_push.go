package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// cmdPush measures push notifications: tasks sends (blocking 1.0, each
// with an inline config naming a receiver in this process) against the
// mount at -url; the receiver records every delivery. It reports
// deliveries per second and the latency from a task's completed status
// (its timestamp) to the receiver reading its delivery. Then the same
// number of sends name a receiver that is down: Caddy's goroutines (from
// its admin pprof, -admin) and RSS (-pid) are sampled while the retries
// go on, to show they stay bounded.
func cmdPush(args []string) error {
	fs := newFlags("push")
	url := fs.String("url", "", "the mount's JSON-RPC URL")
	admin := fs.String("admin", "", "Caddy's admin address (host:port), for its goroutine count")
	pid := fs.Int("pid", 0, "Caddy's pid, for its RSS")
	tasks := fs.Int("tasks", 1000, "tasks, each with a push config")
	conns := fs.Int("c", 16, "concurrent senders")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" {
		return fmt.Errorf("push: -url is required")
	}

	rc := newPushReceiver()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rc}
	go srv.Serve(ln)
	defer srv.Close()
	hook := "http://" + ln.Addr().String() + "/hook"

	start := time.Now()
	if err := pushSends(*url, hook, *tasks, *conns); err != nil {
		return err
	}
	sent := time.Since(start)
	if !rc.wait(*tasks, time.Minute) {
		return fmt.Errorf("push: %d of %d tasks' final notifications arrived", rc.finals(), *tasks)
	}
	all := time.Since(start)
	lat := rc.latencies()
	fmt.Printf("\n### Push notifications: %d blocking sends (%d at a time), each with an inline config, to a receiver on 127.0.0.1\n\n", *tasks, *conns)
	fmt.Println("| deliveries | sends took | all delivered after | deliveries/s | completed status → delivered p50 | p99 | max |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| %d | %s | %s | %.0f | %s | %s | %s |\n", rc.total(), fmtDur(sent), fmtDur(all), float64(rc.total())/all.Seconds(),
		fmtDur(percentile(lat, 0.50)), fmtDur(percentile(lat, 0.99)), fmtDur(percentile(lat, 1)))

	// The receiver is down: every delivery fails and is retried.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String() + "/hook"
	dead.Close()
	g0, rss0 := caddyGoroutines(*admin), rssOf(*pid)
	if err := pushSends(*url, deadURL, *tasks, *conns); err != nil {
		return err
	}
	maxG, maxRSS := g0, rss0
	for range 20 {
		time.Sleep(250 * time.Millisecond)
		maxG, maxRSS = max(maxG, caddyGoroutines(*admin)), max(maxRSS, rssOf(*pid))
	}
	fmt.Printf("\n%d more sends to a receiver that is down (connection refused, retried with backoff): Caddy's goroutines %d before, at most %d in the 5 s after; RSS %s before, at most %s.\n",
		*tasks, g0, maxG, fmtKB(rss0), fmtKB(maxRSS))
	return nil
}

// pushSends makes n blocking SendMessage calls, c at a time, each with an
// inline config for hook.
func pushSends(url, hook string, n, c int) error {
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"push-%d-%d","role":"ROLE_USER","parts":[{"text":"push %d"}]},"configuration":{"taskPushNotificationConfig":{"url":%q}}}}`,
					i, time.Now().UnixNano(), i, i, hook)
				req, _ := http.NewRequest("POST", url, bytes.NewBufferString(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("A2A-Version", "1.0")
				resp, err := client.Do(req)
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if !bytes.Contains(b, []byte("TASK_STATE_COMPLETED")) {
						err = fmt.Errorf("push: a send answered %s", b)
					}
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// pushReceiver records deliveries: their count, and for each task's
// completed status the time from its timestamp to its arrival.
type pushReceiver struct {
	mu    sync.Mutex
	n     int
	lat   []int64
	seen  map[string]bool
	ready chan struct{}
}

func newPushReceiver() *pushReceiver {
	return &pushReceiver{seen: map[string]bool{}, ready: make(chan struct{}, 1)}
}

func (p *pushReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	now := time.Now()
	var sr struct {
		StatusUpdate *struct {
			TaskID string `json:"taskId"`
			Status struct {
				State     string    `json:"state"`
				Timestamp time.Time `json:"timestamp"`
			} `json:"status"`
		} `json:"statusUpdate"`
	}
	_ = json.Unmarshal(b, &sr)
	p.mu.Lock()
	p.n++
	if u := sr.StatusUpdate; u != nil && u.Status.State == "TASK_STATE_COMPLETED" && !p.seen[u.TaskID] {
		p.seen[u.TaskID] = true
		p.lat = append(p.lat, int64(now.Sub(u.Status.Timestamp)))
	}
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

func (p *pushReceiver) finals() int { p.mu.Lock(); defer p.mu.Unlock(); return len(p.seen) }
func (p *pushReceiver) total() int  { p.mu.Lock(); defer p.mu.Unlock(); return p.n }

func (p *pushReceiver) latencies() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := slices.Clone(p.lat)
	slices.Sort(s)
	return s
}

func (p *pushReceiver) wait(n int, d time.Duration) bool {
	deadline := time.After(d)
	for p.finals() < n {
		select {
		case <-p.ready:
		case <-deadline:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

var goroutineTotal = regexp.MustCompile(`goroutine profile: total (\d+)`)

// caddyGoroutines is Caddy's goroutine count from its admin pprof; 0
// without an admin address.
func caddyGoroutines(admin string) int {
	if admin == "" {
		return 0
	}
	resp, err := http.Get("http://" + admin + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(resp.Body, head)
	m := goroutineTotal.FindSubmatch(head[:n])
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

func rssOf(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	kb, _ := memKB(pid, "VmRSS")
	return kb
}
