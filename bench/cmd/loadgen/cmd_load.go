package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// cmdLoad runs every target in interleaved rounds — round 1 of each, then
// round 2 of each, starting each round one target later — so that the
// machine's drift hits all of them alike, then prints one table.
func cmdLoad(args []string) error {
	fs := newFlags("load")
	var targets targetFlags
	fs.Var(&targets, "t", "target name=…,kind=ceiling|v1.0|v0.3|rest|grpc,url=…[,pid=…][,up=…] (repeat)")
	conns := fs.Int("c", 32, "connections per target (closed loop)")
	dur := fs.Duration("d", 10*time.Second, "measured duration of one round")
	warmup := fs.Duration("warmup", 2*time.Second, "unmeasured warm-up before each round")
	rounds := fs.Int("rounds", 3, "rounds per target")
	baseline := fs.String("ceiling", "ceiling", "name of the target the ratios are taken against")
	title := fs.String("title", "Blocking sends", "the table's heading, before its parameters")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(targets) == 0 {
		return errors.New("no targets (-t)")
	}
	wbase := 0
	for r := range *rounds {
		for i := range targets {
			t := targets[(i+r)%len(targets)]
			p := phase{conns: *conns, warmup: *warmup, dur: *dur, wbase: wbase}
			wbase += *conns
			cpu0, _ := cpuTicks(t.PID)
			up0, _ := cpuTicks(t.UpPID)
			// The CPU window includes the warm-up; scale it by the share
			// of requests measured (the load is steady across both).
			started := time.Now()
			res := p.run(t)
			wall := time.Since(started)
			cpu1, _ := cpuTicks(t.PID)
			up1, _ := cpuTicks(t.UpPID)
			share := 1.0
			if wall > 0 && res.elapsed > 0 {
				share = float64(res.elapsed) / float64(wall)
			}
			t.cpu += int64(float64(cpu1-cpu0) * share)
			t.upCPU += int64(float64(up1-up0) * share)
			t.rounds = append(t.rounds, res.rps())
			t.lat = append(t.lat, res.lat...)
			t.ok += res.ok
			t.errs += res.errs
			t.measured += res.elapsed
			if t.firstErr == "" {
				t.firstErr = res.firstErr
			}
			logf("round %d/%d %-12s %8.0f req/s  %d ok  %d errors %s", r+1, *rounds, t.Name, res.rps(), res.ok, res.errs, res.firstErr)
		}
	}
	printLoadTable(targets, *title, *baseline, *conns, *dur, *rounds)
	var failed []string
	for _, t := range targets {
		if t.errs > 0 {
			failed = append(failed, t.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("targets with errors: %s", strings.Join(failed, ", "))
	}
	return nil
}

func printLoadTable(targets []*target, title, baseline string, conns int, dur time.Duration, rounds int) {
	var base *target
	for _, t := range targets {
		slices.Sort(t.lat)
		if t.Name == baseline {
			base = t
		}
	}
	fmt.Printf("\n### %s: %d connections, closed loop, %d interleaved rounds × %s\n\n", title, conns, rounds, dur)
	fmt.Println("| target | req/s (median) | rounds | p50 | p99 | peak RSS | CPU/req (server + upstream) | req/s vs ceiling | p99 vs ceiling | errors |")
	fmt.Println("|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
	for _, t := range targets {
		var rs []string
		for _, r := range t.rounds {
			rs = append(rs, fmt.Sprintf("%.0f", r))
		}
		hwm, _ := memKB(t.PID, "VmHWM")
		p99 := percentile(t.lat, 0.99)
		ratio, p99ratio := "–", "–"
		if base != nil && base != t && median(base.rounds) > 0 {
			ratio = fmt.Sprintf("%.2f×", median(t.rounds)/median(base.rounds))
			if bp := percentile(base.lat, 0.99); bp > 0 {
				p99ratio = fmt.Sprintf("%.2f×", float64(p99)/float64(bp))
			}
		}
		errs := "0"
		if t.errs > 0 {
			errs = fmt.Sprintf("**FAIL %d**: %.120s", t.errs, t.firstErr)
		}
		fmt.Printf("| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			t.Name, median(t.rounds), strings.Join(rs, " / "), fmtDur(percentile(t.lat, 0.5)), fmtDur(p99),
			fmtKB(hwm), cpuPerReq(t), ratio, p99ratio, errs)
	}
	fmt.Println()
}

// cpuPerReq is the CPU time the server (and its upstream) spent per
// measured request.
func cpuPerReq(t *target) string {
	n := t.ok + t.errs
	if n == 0 || t.PID == 0 {
		return "–"
	}
	per := func(ticks int64) float64 {
		return float64(ticks) / clockTicks * 1e6 / float64(n)
	}
	if t.UpPID == 0 {
		return fmt.Sprintf("%.0f µs", per(t.cpu))
	}
	return fmt.Sprintf("%.0f + %.0f µs", per(t.cpu), per(t.upCPU))
}
