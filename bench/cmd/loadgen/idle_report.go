package main

import (
	"fmt"
	"strings"
)

// printIdle prints the runs' markdown section: one table with a row per
// target, protocol and level, and, with two targets (the module, then its
// baseline), a table of what a stream costs the first beyond the second.
func printIdle(cfg idleConfig, targets []*idleTarget, protos []string, runs []idleRun) {
	total := cfg.levels[len(cfg.levels)-1]
	var names []string
	fresh := true
	for _, t := range targets {
		names = append(names, t.name)
		fresh = fresh && len(t.argv) > 0
	}
	fmt.Printf("\n### Idle SSE streams: %s\n\n", strings.Join(names, " and "))
	for _, t := range targets {
		switch t.kind {
		case idleA2A:
			fmt.Printf("- %s: SubscribeToTask streams on auth-required tasks; each stream's first frame, the task, is checked.\n", t.name)
		case idleHold:
			fmt.Printf("- %s: the same POST (Accept: text/event-stream), answered with one SSE comment (checked) that the server flushes before it holds the stream open.\n", t.name)
		}
	}
	fmt.Println()
	fmt.Printf("h1: HTTP/1.1, one connection per stream; h2c: HTTP/2 cleartext (prior knowledge), %d streams per connection. ", cfg.perConn)
	if fresh {
		fmt.Print("Each target and protocol on a fresh server process.")
	} else {
		fmt.Print("A target with a running server is measured on that process for every protocol, in the order of the table.")
	}
	fmt.Printf(" Each reading is taken %s after the streams opened", cfg.settle)
	if cfg.admin != "" {
		fmt.Printf("; the \"after GC\" one after a GC forced through Caddy's admin API (/debug/pprof/heap?gc=1) and another %s, with the live Go heap and goroutine stacks from /debug/vars", cfg.settle)
	}
	fmt.Print(". Every stream must answer 200 with its first frame and stay open to the end. Per stream: what the streams added to the server with no stream open. Server RSS:\n\n")
	for _, r := range runs {
		var ready string
		switch r.target.kind {
		case idleA2A:
			ready = fmt.Sprintf("%s with %d auth-required tasks and no stream (%.1f KB per task)", fmtKB(r.ready.rss), total, float64(r.ready.rss-r.base.rss)/float64(total))
		case idleHold:
			ready = fmt.Sprintf("%s after %d streams opened and closed (warm-up), no stream open", fmtKB(r.ready.rss), cfg.conns)
		}
		fmt.Printf("- %s, %s: %s at start, %s, peak %s\n", r.target.name, r.proto, fmtKB(r.base.rss), ready, fmtKB(r.hwm))
	}
	fmt.Println()
	per := func(kb, base int64, n int) string { return fmt.Sprintf("%.1f KB", float64(kb-base)/float64(n)) }
	if cfg.admin == "" {
		fmt.Println("| target | protocol | open streams | connections | server RSS | added by the streams | per stream |")
		fmt.Println("|---|---|---:|---:|---:|---:|---:|")
	} else {
		fmt.Println("| target | protocol | open streams | connections | server RSS | per stream | RSS after GC | per stream after GC | Go live heap, per stream | stacks, per stream |")
		fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	}
	for _, run := range runs {
		b := run.ready
		for _, r := range run.rows {
			if cfg.admin == "" {
				fmt.Printf("| %s | %s | %d | %d | %s | %s | %s |\n", run.target.name, run.proto, r.streams, r.conns, fmtKB(r.rss), fmtKB(r.rss-b.rss), per(r.rss, b.rss, r.streams))
				continue
			}
			fmt.Printf("| %s | %s | %d | %d | %s | %s | %s | **%s** | %s | %s |\n", run.target.name, run.proto, r.streams, r.conns, fmtKB(r.rss), per(r.rss, b.rss, r.streams),
				fmtKB(r.gcRSS), per(r.gcRSS, b.gcRSS, r.streams), per(r.heap, b.heap, r.streams), per(r.stack, b.stack, r.streams))
		}
	}
	fmt.Println()
	if len(targets) == 2 {
		printIdleDiff(cfg, targets[0], targets[1], protos, runs)
	}
}

// printIdleDiff prints, per protocol and level, what one idle stream costs
// target a and baseline b, and the difference: a's own cost per stream.
func printIdleDiff(cfg idleConfig, a, b *idleTarget, protos []string, runs []idleRun) {
	find := func(t *idleTarget, proto string) *idleRun {
		for i := range runs {
			if runs[i].target == t && runs[i].proto == proto {
				return &runs[i]
			}
		}
		return nil
	}
	// perStream is what the streams of row i of run cost per stream (KB):
	// after the GC, or the plain RSS without an admin URL; and the live
	// heap plus stacks, and goroutines.
	perStream := func(run *idleRun, i int) (rss, heapStack, gor float64) {
		r, base, n := run.rows[i], run.ready, float64(run.rows[i].streams)
		if cfg.admin == "" {
			return float64(r.rss-base.rss) / n, 0, 0
		}
		return float64(r.gcRSS-base.gcRSS) / n, float64(r.heap+r.stack-base.heap-base.stack) / n, float64(r.goroutines-base.goroutines) / n
	}
	fmt.Printf("Per idle stream: %s, its baseline %s, and the difference, %s's own cost (negative: it holds a stream for less than the baseline)", a.name, b.name, a.name)
	if cfg.admin == "" {
		fmt.Print(", from the RSS:\n\n")
		fmt.Printf("| protocol | open streams | %s | %s | difference |\n", a.name, b.name)
		fmt.Println("|---|---:|---:|---:|---:|")
	} else {
		fmt.Print(", from the RSS after GC and from the live heap plus stacks; and the goroutines each stream adds:\n\n")
		fmt.Printf("| protocol | open streams | RSS after GC: %s | %s | **difference** | heap + stacks: %s | %s | **difference** | goroutines: %s | %s |\n", a.name, b.name, a.name, b.name, a.name, b.name)
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	}
	for _, p := range protos {
		ra, rb := find(a, p), find(b, p)
		if ra == nil || rb == nil {
			continue
		}
		for i := range min(len(ra.rows), len(rb.rows)) {
			aRSS, aHS, aG := perStream(ra, i)
			bRSS, bHS, bG := perStream(rb, i)
			if cfg.admin == "" {
				fmt.Printf("| %s | %d | %.1f KB | %.1f KB | %+.1f KB |\n", p, ra.rows[i].streams, aRSS, bRSS, aRSS-bRSS)
				continue
			}
			fmt.Printf("| %s | %d | %.1f KB | %.1f KB | **%+.1f KB** | %.1f KB | %.1f KB | **%+.1f KB** | %.2f | %.2f |\n",
				p, ra.rows[i].streams, aRSS, bRSS, aRSS-bRSS, aHS, bHS, aHS-bHS, aG, bG)
		}
	}
	fmt.Println()
}
