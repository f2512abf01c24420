package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// target is one server under load and what was measured of it.
type target struct {
	Name string
	Kind Kind
	URL  string
	// PID is the server process (RSS, CPU); UpPID its upstream, if any,
	// whose CPU per request is reported too.
	PID, UpPID int
	// N is how many sends the sends command makes to this target (0: -n).
	N int64

	rb   *requestBuilder
	addr string

	rounds   []float64 // req/s of each measured round
	lat      []int64   // ns, every measured request of every round
	ok       int64
	errs     int64
	firstErr string
	cpu      int64 // ticks of PID over the measured windows
	upCPU    int64
	measured time.Duration
}

// eachKV calls set with every key and value of s, a comma-separated list
// of key=value (a target flag), and names s in any error.
func eachKV(s string, set func(k, v string) error) error {
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("target %q: %q is not key=value", s, kv)
		}
		if err := set(k, v); err != nil {
			return fmt.Errorf("target %q: %w", s, err)
		}
	}
	return nil
}

// parseTarget reads name=…,kind=…,url=…[,pid=…][,up=…].
func parseTarget(s string) (*target, error) {
	t := &target{}
	err := eachKV(s, func(k, v string) (err error) {
		switch k {
		case "name":
			t.Name = v
		case "kind":
			t.Kind, err = parseKind(v)
		case "url":
			t.URL = v
		case "pid":
			t.PID, err = strconv.Atoi(v)
		case "up":
			t.UpPID, err = strconv.Atoi(v)
		case "n":
			t.N, err = strconv.ParseInt(v, 10, 64)
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if t.Name == "" || t.Kind == "" || t.URL == "" {
		return nil, fmt.Errorf("target %q: name, kind and url are required", s)
	}
	if t.Kind == KindGRPC {
		return t, nil
	}
	t.rb, t.addr, err = newRequestBuilder(t.Kind, t.URL)
	return t, err
}

// phase is one closed-loop run against a target.
type phase struct {
	conns  int
	warmup time.Duration
	dur    time.Duration // 0: until limit requests are done
	limit  int64         // 0: until dur has passed
	// wbase makes worker numbers, and so message ids and texts, unique
	// across phases.
	wbase int
	// progress, if set, is called by the worker that completes every
	// progressEvery-th request (counting from 1).
	progress      func(done int64)
	progressEvery int64
}

// phaseResult is what one phase measured.
type phaseResult struct {
	ok, errs int64
	firstErr string
	lat      []int64
	elapsed  time.Duration // measured window
}

func (r phaseResult) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ok+r.errs) / r.elapsed.Seconds()
}

// run drives conns connections, each sending its next request as soon as
// the previous answer is read and checked (closed loop).
func (p phase) run(t *target) phaseResult {
	var (
		mu       sync.Mutex
		res      phaseResult
		done     atomic.Int64 // requests started within the limit
		finished atomic.Int64
		lastEnd  atomic.Int64
		wg       sync.WaitGroup
	)
	start := time.Now()
	measureFrom := start.Add(p.warmup)
	var end time.Time
	if p.dur > 0 {
		end = measureFrom.Add(p.dur)
	}
	fail := func(err error) {
		mu.Lock()
		res.errs++
		if res.firstErr == "" {
			res.firstErr = err.Error()
		}
		mu.Unlock()
	}
	for i := range p.conns {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var (
				c        *conn
				gc       *grpcConn
				req, bod []byte
				scratch  = make([]byte, 0, 64)
				lat      = make([]int64, 0, 4096)
				ok       int64
			)
			// record counts a request that began at t0 and ended at t1,
			// if it began in the measured window.
			record := func(err error, t0, t1 time.Time) {
				if t0.Before(measureFrom) {
					return
				}
				if err != nil {
					fail(err)
				} else {
					ok++
					lat = append(lat, int64(t1.Sub(t0)))
				}
				lastEnd.Store(t1.UnixNano())
			}
			defer func() {
				if c != nil {
					c.Close()
				}
				if gc != nil {
					gc.Close()
				}
				mu.Lock()
				res.lat = append(res.lat, lat...)
				res.ok += ok
				mu.Unlock()
			}()
			for seq := 1; ; seq++ {
				t0 := time.Now()
				if !end.IsZero() && !t0.Before(end) {
					return
				}
				if p.limit > 0 && done.Add(1) > p.limit {
					return
				}
				if t.Kind == KindGRPC {
					if gc == nil {
						var err error
						if gc, err = dialGRPC(t.URL); err != nil {
							fail(err)
							time.Sleep(10 * time.Millisecond)
							continue
						}
					}
					err := gc.call(w, seq, scratch)
					record(err, t0, time.Now())
					continue
				}
				if c == nil {
					var err error
					if c, err = dial(t.addr); err != nil {
						fail(err)
						time.Sleep(10 * time.Millisecond)
						continue
					}
				}
				req, bod = t.rb.build(req, bod, w, seq)
				resp, err := c.roundTrip(req)
				t1 := time.Now()
				if err == nil {
					err = check(t.Kind, resp, w, seq, scratch)
				} else {
					c.Close()
					c = nil
					if errors.Is(err, io.EOF) {
						err = fmt.Errorf("connection closed by server: %w", err)
					}
				}
				if c != nil && resp.Close {
					c.Close()
					c = nil
				}
				record(err, t0, t1)
				if n := finished.Add(1); p.progress != nil && p.progressEvery > 0 && n%p.progressEvery == 0 {
					p.progress(n)
				}
			}
		}(p.wbase + i)
	}
	wg.Wait()
	if last := time.Unix(0, lastEnd.Load()); last.After(measureFrom) {
		res.elapsed = last.Sub(measureFrom)
	}
	return res
}

// percentile of sorted ns samples, as a duration.
func percentile(sorted []int64, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	i = min(max(i, 0), len(sorted)-1)
	return time.Duration(sorted[i])
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
}
