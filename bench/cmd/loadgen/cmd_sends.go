package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// cmdSends sends N blocking messages to each target in turn and samples the
// server's resident set as it goes: with a bounded store it must level off
// once the bound is reached; a store without a bound keeps growing.
func cmdSends(args []string) error {
	fs := newFlags("sends")
	var targets targetFlags
	fs.Var(&targets, "t", "target name=…,kind=…,url=…,pid=…[,n=…] (repeat)")
	n := fs.Int64("n", 100000, "sends per target (a target's n= overrides)")
	conns := fs.Int("c", 32, "connections")
	samples := fs.Int("samples", 10, "RSS samples per target, evenly spaced")
	from := fs.Float64("flat-from", 0.2, "share of the run after which RSS must be flat (the store is full by then)")
	redisAddr := fs.String("redis", "", "optional host:port of the Redis the targets keep their tasks in: its used_memory and keys are sampled with the RSS")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(targets) == 0 {
		return errors.New("no targets (-t)")
	}
	type row struct {
		t        *target
		n        int64
		before   int64
		rss      []int64 // KB at each checkpoint
		redis    []redisMemory
		redis0   redisMemory
		redisErr error
		res      phaseResult
		elapsed  time.Duration
	}
	var rows []row
	wbase := 1 << 20 // clear of the load command's worker numbers
	var failed []string
	for _, t := range targets {
		total := *n
		if t.N > 0 {
			total = t.N
		}
		every := max(total/int64(*samples), 1)
		r := row{t: t, n: total}
		r.before, _ = memKB(t.PID, "VmRSS")
		if *redisAddr != "" {
			r.redis0, r.redisErr = readRedisMemory(*redisAddr)
		}
		var mu sync.Mutex
		p := phase{conns: *conns, limit: total, wbase: wbase, progressEvery: every,
			progress: func(int64) {
				kb, _ := memKB(t.PID, "VmRSS")
				var m redisMemory
				var err error
				if *redisAddr != "" {
					m, err = readRedisMemory(*redisAddr)
				}
				mu.Lock()
				r.rss = append(r.rss, kb)
				if *redisAddr != "" {
					r.redis = append(r.redis, m)
					if r.redisErr == nil {
						r.redisErr = err
					}
				}
				mu.Unlock()
			}}
		wbase += *conns
		start := time.Now()
		r.res = p.run(t)
		r.elapsed = time.Since(start)
		logf("sends %-12s %d in %s (%.0f/s), %d errors %s", t.Name, total, r.elapsed.Round(time.Millisecond),
			float64(total)/r.elapsed.Seconds(), r.res.errs, r.res.firstErr)
		if r.res.errs > 0 || r.redisErr != nil {
			failed = append(failed, t.Name)
		}
		rows = append(rows, r)
	}

	fmt.Printf("\n### RSS across many blocking sends (%d connections), sampled every 1/%d of the run\n\n", *conns, *samples)
	fmt.Println("| target | sends | send/s | RSS before | RSS at each 1/" + fmt.Sprint(*samples) + " of the run (MB) | RSS change over the last " +
		fmt.Sprintf("%.0f%%", (1-*from)*100) + " | errors |")
	fmt.Println("|---|---:|---:|---:|---|---:|---|")
	for _, r := range rows {
		var cells []string
		for _, kb := range r.rss {
			cells = append(cells, fmt.Sprintf("%.0f", float64(kb)/1024))
		}
		errs := "0"
		if r.res.errs > 0 {
			errs = fmt.Sprintf("**FAIL %d**: %.120s", r.res.errs, r.res.firstErr)
		}
		fmt.Printf("| %s | %d | %.0f | %s | %s | %s | %s |\n", r.t.Name, r.n, float64(r.n)/r.elapsed.Seconds(),
			fmtKB(r.before), strings.Join(cells, " · "), flatness(r.rss, *from), errs)
	}
	fmt.Println()
	if *redisAddr != "" {
		var rr []redisRow
		for _, r := range rows {
			rr = append(rr, redisRow{name: r.t.Name, before: r.redis0, samples: r.redis, err: r.redisErr})
		}
		printRedisSamples(rr, *samples, *from)
	}
	if len(failed) > 0 {
		return fmt.Errorf("targets with errors: %s", strings.Join(failed, ", "))
	}
	return nil
}

// flatness describes the samples taken after the first `from` share of the
// run: their growth from the first of them to the last, and the largest
// deviation from their mean.
func flatness(kb []int64, from float64) string {
	i := int(math.Ceil(from*float64(len(kb)))) - 1
	i = max(i, 0)
	if len(kb)-i < 2 {
		return "–"
	}
	s := kb[i:]
	var sum float64
	for _, v := range s {
		sum += float64(v)
	}
	mean := sum / float64(len(s))
	var dev float64
	for _, v := range s {
		dev = max(dev, math.Abs(float64(v)-mean)/mean)
	}
	growth := float64(s[len(s)-1]-s[0]) / float64(s[0])
	return fmt.Sprintf("%+.1f%% (max dev. ±%.1f%%)", growth*100, dev*100)
}
