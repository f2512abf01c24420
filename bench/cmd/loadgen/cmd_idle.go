package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// cmdIdle measures what an open, idle SSE stream costs a server, level by
// level of open streams, with a reading of the server's memory at each.
//
// A target of kind a2a is the module: the generator first creates
// auth-required tasks (an interrupted state whose streams stay open), then
// opens SubscribeToTask streams on them; the tasks' own cost is taken out
// by reading the memory before the streams open. A target of kind hold gets
// the same POSTs, after a few streams opened and closed as a warm-up, from
// a server that answers each with one SSE comment and holds it open. The
// hold target named by -floor is the floor: a Caddy whose handler does no
// more than that (bench/cmd/holdcaddy), so what its streams cost any
// handler holding a request open costs. With the module and the floor in
// one run, the difference is what the module itself costs per stream.
// Other hold targets (Caddy's reverse_proxy in front of the bench
// upstream's /hold) are references, in the table only.
//
// Each target is measured for each protocol of -proto: over HTTP/1.1 (one
// connection per stream) and over HTTP/2 cleartext (-h2streams streams
// multiplexed on each connection). A target without a pid has a server
// command (the commands follow the flags, separated by "--", one per such
// target in order); the generator starts it afresh for each protocol, so
// that what one measurement leaves behind (freed but not returned memory,
// grown pools) does not count against the next.
func cmdIdle(args []string) error {
	fs := newFlags("idle")
	var targets idleTargetFlags
	fs.Var(&targets, "t", "target, repeatable: name=…,kind=a2a|hold,url=…[,pid=…] (a2a: the module's JSON-RPC URL, whose upstream answers auth-required; hold: a URL that answers one \""+holdComment+"\" comment and holds the stream; pid: a running server instead of a command)")
	floorName := fs.String("floor", "", "name of the hold target that is the floor (the least handler that holds a stream): adds, for each a2a target, a table of its cost per stream minus the floor's")
	levelsFlag := fs.String("levels", "1000,10000", "stream counts to measure at, ascending")
	protosFlag := fs.String("proto", "h1", "protocols to measure, in this order: h1 (HTTP/1.1, one connection per stream), h2c (HTTP/2 cleartext, multiplexed)")
	perConn := fs.Int("h2streams", 200, "h2c: streams per connection (below the server's limit: 250 in Caddy and net/http)")
	conns := fs.Int("c", 32, "connections used to create the tasks (a2a) or warm up (hold); streams opened at a time")
	settle := fs.Duration("settle", 3*time.Second, "wait before each RSS reading")
	admin := fs.String("admin", "", "Caddy admin URL of the servers measured: if set, each reading is also taken after a forced GC, with the Go heap and stack in use and the goroutines")
	profDir := fs.String("profiles", "", "with -admin: save heap and goroutine profiles at each level in this directory")
	serverLog := fs.String("serverlog", "", "with server commands: append their output to this file")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadgen idle [flags] -t … [-t …] [-- SERVER-COMMAND [ARGS...] [-- SERVER-COMMAND...]]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(targets) == 0 {
		return errors.New("at least one -t is required")
	}
	if err := assignCommands(targets, fs.Args()); err != nil {
		return err
	}
	floor, err := findFloor(targets, *floorName)
	if err != nil {
		return err
	}
	cfg := idleConfig{perConn: *perConn, conns: *conns, settle: *settle, admin: *admin, profDir: *profDir, serverLog: *serverLog}
	for _, s := range strings.Split(*levelsFlag, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || (len(cfg.levels) > 0 && n <= cfg.levels[len(cfg.levels)-1]) {
			return fmt.Errorf("-levels %q: want ascending positive counts", *levelsFlag)
		}
		cfg.levels = append(cfg.levels, n)
	}
	protos := strings.Split(*protosFlag, ",")
	for i, p := range protos {
		if _, err := newOpener(p, "", cfg.perConn, nil); err != nil {
			return fmt.Errorf("-proto: %w", err)
		}
		if slices.Contains(protos[:i], p) {
			return fmt.Errorf("-proto %q: %s twice", *protosFlag, p)
		}
	}

	// A measurement that fails does not hide the others' results; the
	// command still fails.
	var runs []idleRun
	var errs []error
	for _, p := range protos {
		for _, t := range targets {
			run, err := measureIdle(cfg, t, p)
			if err != nil {
				logf("idle: %s %s: %v", t.name, p, err)
				errs = append(errs, fmt.Errorf("%s %s: %w", t.name, p, err))
				continue
			}
			runs = append(runs, run)
		}
	}
	if len(runs) > 0 {
		printIdle(os.Stdout, cfg, targets, floor, protos, runs)
	}
	return errors.Join(errs...)
}

// idleConfig is the idle command's settings.
type idleConfig struct {
	levels    []int
	perConn   int
	conns     int
	settle    time.Duration
	admin     string
	profDir   string
	serverLog string
}

// idleRun is what one target measured over one protocol.
type idleRun struct {
	target *idleTarget
	proto  string
	// base is the server at the start, ready the server with the tasks
	// created (a2a) or warmed up (hold) and no stream open; hwm is its
	// peak RSS (KB) at the end.
	base, ready reading
	hwm         int64
	rows        []idleRow
}

// idleRow is one level of open streams.
type idleRow struct {
	streams, conns int
	reading
}

// measureIdle prepares the target (tasks or warm-up), opens its streams
// over one protocol level by level with a reading at each, checks that
// none of them ended, and closes them.
func measureIdle(cfg idleConfig, t *idleTarget, proto string) (run idleRun, err error) {
	run.target, run.proto = t, proto
	pid := t.pid
	if len(t.argv) > 0 {
		srv, err := startServer(t.argv, cfg.serverLog, t.addr)
		if err != nil {
			return run, err
		}
		// Deferred first, so it runs after the streams are closed.
		defer func() {
			if e := srv.stop(); e != nil && err == nil {
				err = e
			}
		}()
		pid = srv.pid()
	}
	check := checkFirstFrame
	if t.kind == idleHold {
		check = checkHoldComment
	}
	o, err := newOpener(proto, t.url, cfg.perConn, check)
	if err != nil {
		return run, err
	}
	defer o.close()
	total := cfg.levels[len(cfg.levels)-1]
	read := func() (reading, error) { return takeReading(pid, cfg.admin, cfg.settle) }

	if run.base, err = read(); err != nil {
		return run, err
	}
	var ids []string
	switch t.kind {
	case idleA2A:
		ids, err = createAuthTasks(t.url, total, cfg.conns)
	case idleHold:
		ids, err = warmUp(proto, t.url, cfg.perConn, cfg.conns, total)
	}
	if err != nil {
		return run, err
	}
	if run.ready, err = read(); err != nil {
		return run, err
	}
	logf("idle %s %s: ready (%s), RSS %s → %s", t.name, proto, readyWhat(t.kind, total, cfg.conns), fmtKB(run.base.rss), fmtKB(run.ready.rss))

	var (
		held   []io.Closer
		closed atomic.Int64 // streams the server ended while they should idle
	)
	defer func() {
		for _, s := range held {
			s.Close()
		}
	}()
	for _, level := range cfg.levels {
		ss, err := openStreams(o, len(held), ids[len(held):level], cfg.conns, &closed)
		held = append(held, ss...)
		if err != nil {
			return run, fmt.Errorf("opening streams %d–%d: %w", len(held)+1, level, err)
		}
		r, err := read()
		if err != nil {
			return run, err
		}
		run.rows = append(run.rows, idleRow{level, o.conns(), r})
		if cfg.admin != "" && cfg.profDir != "" {
			for _, p := range []string{"heap", "goroutine"} {
				file := fmt.Sprintf("%s/idle-%s-%s-%s-%d.pprof", cfg.profDir, fileSafe.ReplaceAllString(t.name, "-"), proto, p, level)
				if err := adminSave(fmt.Sprintf("%s/debug/pprof/%s", cfg.admin, p), file); err != nil {
					return run, err
				}
			}
		}
		logf("idle %s %s: %d streams open on %d connections, RSS %s (after GC: %s)", t.name, proto, level, o.conns(), fmtKB(r.rss), fmtKB(r.gcRSS))
	}
	if n := closed.Load(); n > 0 {
		return run, fmt.Errorf("the server ended %d idle streams", n)
	}
	run.hwm, err = memKB(pid, "VmHWM")
	return run, err
}

// readyWhat says what was done to a target before its streams opened.
func readyWhat(kind string, total, conns int) string {
	if kind == idleA2A {
		return fmt.Sprintf("%d auth-required tasks", total)
	}
	return fmt.Sprintf("%d streams opened and closed", conns)
}

// warmUp opens n hold streams and closes them again, on connections of
// their own, so that what a server sets up on its first requests (pools,
// its proxy transport) is in the reading taken before the measured streams,
// as the task creation puts it there for the module. It returns the ids of
// the measured streams, which a hold server ignores.
func warmUp(proto, u string, perConn, n, total int) ([]string, error) {
	o, err := newOpener(proto, u, perConn, checkHoldComment)
	if err != nil {
		return nil, err
	}
	warm := make([]string, n)
	for i := range warm {
		warm[i] = fmt.Sprintf("warm-up-%d", i)
	}
	var closed atomic.Int64
	ss, err := openStreams(o, 0, warm, n, &closed)
	for _, s := range ss {
		s.Close()
	}
	o.close()
	if err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	ids := make([]string, total)
	for i := range ids {
		ids[i] = fmt.Sprintf("hold-%d", i)
	}
	return ids, nil
}

// createAuthTasks makes n tasks with blocking SendMessage calls and returns
// their ids; each must answer TASK_STATE_AUTH_REQUIRED.
func createAuthTasks(rpc string, n, conns int) ([]string, error) {
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *conn
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				err := func() error {
					req, addr, err := rpcRequest(rpc, "SendMessage",
						fmt.Sprintf(`{"message":{"messageId":"idle-%s-%d-%d","role":"ROLE_USER","parts":[{"text":"sign me in"}]}}`, runID, w, i), false)
					if err != nil {
						return err
					}
					if c == nil {
						if c, err = dial(addr); err != nil {
							return err
						}
					}
					resp, err := c.roundTrip(req)
					if err != nil {
						c.Close()
						c = nil
						return err
					}
					var a struct {
						Result struct {
							Task struct {
								ID     string `json:"id"`
								Status struct {
									State string `json:"state"`
								} `json:"status"`
							} `json:"task"`
						} `json:"result"`
					}
					if err := json.Unmarshal(resp.Body, &a); err != nil || resp.Status != 200 {
						return fmt.Errorf("HTTP %d %.200s", resp.Status, resp.Body)
					}
					if a.Result.Task.Status.State != "TASK_STATE_AUTH_REQUIRED" || a.Result.Task.ID == "" {
						return fmt.Errorf("answer is not an auth-required task: %.200s", resp.Body)
					}
					ids[i] = a.Result.Task.ID
					return nil
				}()
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return ids, nil
}
