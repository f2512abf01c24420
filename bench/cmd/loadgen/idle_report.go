package main

import (
	"fmt"
	"io"
	"strings"
)

// printIdle writes the runs' markdown section: one table with a row per
// target, protocol and level, and, with a floor (a hold target whose
// handler does the least that holds a stream), a table per a2a target of
// what a stream costs it beyond the floor.
func printIdle(w io.Writer, cfg idleConfig, targets []*idleTarget, floor *idleTarget, protos []string, runs []idleRun) {
	total := cfg.levels[len(cfg.levels)-1]
	var names []string
	fresh := true
	for _, t := range targets {
		names = append(names, t.name)
		fresh = fresh && len(t.argv) > 0
	}
	fmt.Fprintf(w, "\n### Idle SSE streams: %s\n\n", joinAnd(names))
	for _, t := range targets {
		switch {
		case t.kind == idleA2A:
			fmt.Fprintf(w, "- %s: SubscribeToTask streams on auth-required tasks; each stream's first frame, the task, is checked.\n", t.name)
		case t == floor:
			fmt.Fprintf(w, "- %s: the same POST (Accept: text/event-stream), answered by the least a handler can do to hold a stream: read the body, write one SSE comment (checked), flush, wait for the client. What any handler holding a request open costs this server: the floor.\n", t.name)
		default:
			fmt.Fprintf(w, "- %s: the same POST (Accept: text/event-stream), answered with one SSE comment (checked) that the server flushes before it holds the stream open.\n", t.name)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "h1: HTTP/1.1, one connection per stream; h2c: HTTP/2 cleartext (prior knowledge), %d streams per connection. ", cfg.perConn)
	if fresh {
		fmt.Fprint(w, "Each target and protocol on a fresh server process.")
	} else {
		fmt.Fprint(w, "A target with a running server is measured on that process for every protocol, in the order of the table.")
	}
	fmt.Fprintf(w, " Each reading is taken %s after the streams opened", cfg.settle)
	if cfg.admin != "" {
		fmt.Fprintf(w, "; the \"after GC\" one after a GC forced through Caddy's admin API (/debug/pprof/heap?gc=1) and another %s, with the live Go heap and goroutine stacks from /debug/vars", cfg.settle)
	}
	fmt.Fprint(w, ". Every stream must answer 200 with its first frame and stay open to the end. Per stream: what the streams added to the server with no stream open. Server RSS:\n\n")
	for _, r := range runs {
		var ready string
		switch r.target.kind {
		case idleA2A:
			ready = fmt.Sprintf("%s with %d auth-required tasks and no stream (%.1f KB per task)", fmtKB(r.ready.rss), total, float64(r.ready.rss-r.base.rss)/float64(total))
		case idleHold:
			ready = fmt.Sprintf("%s after %d streams opened and closed (warm-up), no stream open", fmtKB(r.ready.rss), cfg.conns)
		}
		fmt.Fprintf(w, "- %s, %s: %s at start, %s, peak %s\n", r.target.name, r.proto, fmtKB(r.base.rss), ready, fmtKB(r.hwm))
	}
	fmt.Fprintln(w)
	per := func(kb, base int64, n int) string { return fmt.Sprintf("%.1f KB", float64(kb-base)/float64(n)) }
	if cfg.admin == "" {
		fmt.Fprintln(w, "| target | protocol | open streams | connections | server RSS | added by the streams | per stream |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	} else {
		fmt.Fprintln(w, "| target | protocol | open streams | connections | server RSS | per stream | RSS after GC | per stream after GC | Go live heap, per stream | stacks, per stream | goroutines, per stream |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	}
	for _, run := range runs {
		b := run.ready
		for _, r := range run.rows {
			if cfg.admin == "" {
				fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s |\n", run.target.name, run.proto, r.streams, r.conns, fmtKB(r.rss), fmtKB(r.rss-b.rss), per(r.rss, b.rss, r.streams))
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s | **%s** | %s | %s | %.2f |\n", run.target.name, run.proto, r.streams, r.conns, fmtKB(r.rss), per(r.rss, b.rss, r.streams),
				fmtKB(r.gcRSS), per(r.gcRSS, b.gcRSS, r.streams), per(r.heap, b.heap, r.streams), per(r.stack, b.stack, r.streams),
				float64(r.goroutines-b.goroutines)/float64(r.streams))
		}
	}
	fmt.Fprintln(w)
	if floor == nil {
		return
	}
	for _, t := range targets {
		if t.kind == idleA2A {
			printIdleDiff(w, cfg, t, floor, protos, runs)
		}
	}
}

// printIdleDiff writes, per protocol and level, what one idle stream costs
// target a and the floor, and the difference: a's own cost per stream.
func printIdleDiff(w io.Writer, cfg idleConfig, a, floor *idleTarget, protos []string, runs []idleRun) {
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
	fmt.Fprintf(w, "Per idle stream: %s; the floor, %s; and the difference, %s's own cost beyond what any handler holding a stream costs (negative: it holds a stream for less than the floor)", a.name, floor.name, a.name)
	if cfg.admin == "" {
		fmt.Fprint(w, ", from the RSS:\n\n")
		fmt.Fprintf(w, "| protocol | open streams | %s | floor | difference |\n", a.name)
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	} else {
		fmt.Fprint(w, ", from the RSS after GC and from the live heap plus stacks; and the goroutines each stream adds:\n\n")
		fmt.Fprintf(w, "| protocol | open streams | RSS after GC: %s | floor | **difference** | heap + stacks: %s | floor | **difference** | goroutines: %s | floor |\n", a.name, a.name, a.name)
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	}
	for _, p := range protos {
		ra, rf := find(a, p), find(floor, p)
		if ra == nil || rf == nil {
			continue
		}
		for i := range min(len(ra.rows), len(rf.rows)) {
			aRSS, aHS, aG := perStream(ra, i)
			fRSS, fHS, fG := perStream(rf, i)
			if cfg.admin == "" {
				fmt.Fprintf(w, "| %s | %d | %.1f KB | %.1f KB | %+.1f KB |\n", p, ra.rows[i].streams, aRSS, fRSS, aRSS-fRSS)
				continue
			}
			fmt.Fprintf(w, "| %s | %d | %.1f KB | %.1f KB | **%+.1f KB** | %.1f KB | %.1f KB | **%+.1f KB** | %.2f | %.2f |\n",
				p, ra.rows[i].streams, aRSS, fRSS, aRSS-fRSS, aHS, fHS, aHS-fHS, aG, fG)
		}
	}
	fmt.Fprintln(w)
}

// joinAnd lists names as prose: "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// findFloor returns the target named name, which must be a hold target,
// or nil for no name.
func findFloor(targets []*idleTarget, name string) (*idleTarget, error) {
	if name == "" {
		return nil, nil
	}
	for _, t := range targets {
		if t.name == name {
			if t.kind != idleHold {
				return nil, fmt.Errorf("-floor %q: a target of kind %s, want %s", name, t.kind, idleHold)
			}
			return t, nil
		}
	}
	return nil, fmt.Errorf("-floor %q: no such target", name)
}
