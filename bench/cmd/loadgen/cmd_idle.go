package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// cmdIdle measures what an open, idle SSE stream costs the server: it
// creates auth-required tasks (an interrupted state whose streams stay
// open), lets the server settle, then opens SubscribeToTask streams on
// them level by level and reads the resident set at each level. The cost of
// the tasks themselves is taken out by measuring before the streams open.
//
// It does so for each protocol of -proto: over HTTP/1.1 (one connection
// per stream) and over HTTP/2 cleartext (-h2streams streams multiplexed on
// each connection). Given a server command after the flags, it starts a
// fresh server for each protocol, so that what one protocol leaves behind
// (freed but not returned memory, grown pools) does not count against the
// next; given -pid, it measures that running server for every protocol.
func cmdIdle(args []string) error {
	fs := newFlags("idle")
	rpc := fs.String("rpc", "", "module JSON-RPC URL whose upstream answers auth-required")
	pid := fs.Int("pid", 0, "server process, if it is not started by the generator (a command after the flags)")
	levelsFlag := fs.String("levels", "1000,10000", "stream counts to measure at, ascending")
	protosFlag := fs.String("proto", "h1", "protocols to measure, in this order: h1 (HTTP/1.1, one connection per stream), h2c (HTTP/2 cleartext, multiplexed)")
	perConn := fs.Int("h2streams", 200, "h2c: streams per connection (below the server's limit: 250 in Caddy and net/http)")
	conns := fs.Int("c", 32, "connections used to create the tasks; streams opened at a time")
	settle := fs.Duration("settle", 3*time.Second, "wait before each RSS reading")
	admin := fs.String("admin", "", "Caddy admin URL: if set, each reading is also taken after a forced GC, with the Go heap and stack in use")
	profDir := fs.String("profiles", "", "with -admin: save heap and goroutine profiles at each level in this directory")
	serverLog := fs.String("serverlog", "", "with a server command: append its output to this file")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadgen idle [flags] -pid PID | loadgen idle [flags] SERVER-COMMAND [ARGS...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := idleConfig{rpc: *rpc, pid: *pid, argv: fs.Args(), perConn: *perConn, conns: *conns,
		settle: *settle, admin: *admin, profDir: *profDir, serverLog: *serverLog}
	if cfg.rpc == "" || (cfg.pid == 0) == (len(cfg.argv) == 0) {
		return errors.New("-rpc and either -pid or a server command are required")
	}
	for _, s := range strings.Split(*levelsFlag, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || (len(cfg.levels) > 0 && n <= cfg.levels[len(cfg.levels)-1]) {
			return fmt.Errorf("-levels %q: want ascending positive counts", *levelsFlag)
		}
		cfg.levels = append(cfg.levels, n)
	}
	protos := strings.Split(*protosFlag, ",")
	for i, p := range protos {
		if _, err := newOpener(p, cfg.rpc, cfg.perConn); err != nil {
			return fmt.Errorf("-proto: %w", err)
		}
		if slices.Contains(protos[:i], p) {
			return fmt.Errorf("-proto %q: %s twice", *protosFlag, p)
		}
	}
	u, err := url.Parse(cfg.rpc)
	if err != nil {
		return err
	}
	cfg.addr = u.Host

	// A protocol that fails does not hide the others' results; the
	// command still fails.
	var runs []idleRun
	var errs []error
	for _, p := range protos {
		run, err := measureIdle(cfg, p)
		if err != nil {
			logf("idle: %s: %v", p, err)
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
			continue
		}
		runs = append(runs, run)
	}
	if len(runs) > 0 {
		printIdle(cfg, runs)
	}
	return errors.Join(errs...)
}

// idleConfig is the idle command's settings.
type idleConfig struct {
	rpc, addr string
	pid       int
	argv      []string
	levels    []int
	perConn   int
	conns     int
	settle    time.Duration
	admin     string
	profDir   string
	serverLog string
}

// idleRun is what one protocol measured.
type idleRun struct {
	proto string
	// base is the server at the start, tasks with the tasks created and
	// no stream open; hwm is its peak RSS (KB) at the end.
	base, tasks reading
	hwm         int64
	rows        []idleRow
}

// idleRow is one level of open streams.
type idleRow struct {
	streams, conns int
	reading
}

// measureIdle creates the tasks, opens the streams of one protocol level
// by level with a reading at each, checks that none of them ended, and
// closes them.
func measureIdle(cfg idleConfig, proto string) (run idleRun, err error) {
	run.proto = proto
	pid := cfg.pid
	if len(cfg.argv) > 0 {
		srv, err := startServer(cfg.argv, cfg.serverLog, cfg.addr)
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
	o, err := newOpener(proto, cfg.rpc, cfg.perConn)
	if err != nil {
		return run, err
	}
	defer o.close()
	total := cfg.levels[len(cfg.levels)-1]
	read := func() (reading, error) { return takeReading(pid, cfg.admin, cfg.settle) }

	if run.base, err = read(); err != nil {
		return run, err
	}
	ids, err := createAuthTasks(cfg.rpc, total, cfg.conns)
	if err != nil {
		return run, err
	}
	if run.tasks, err = read(); err != nil {
		return run, err
	}
	logf("idle %s: %d auth-required tasks, RSS %s → %s", proto, total, fmtKB(run.base.rss), fmtKB(run.tasks.rss))

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
				if err := adminSave(fmt.Sprintf("%s/debug/pprof/%s", cfg.admin, p), fmt.Sprintf("%s/idle-%s-%s-%d.pprof", cfg.profDir, proto, p, level)); err != nil {
					return run, err
				}
			}
		}
		logf("idle %s: %d streams open on %d connections, RSS %s (after GC: %s)", proto, level, o.conns(), fmtKB(r.rss), fmtKB(r.gcRSS))
	}
	if n := closed.Load(); n > 0 {
		return run, fmt.Errorf("the server ended %d idle streams", n)
	}
	run.hwm, err = memKB(pid, "VmHWM")
	return run, err
}

// printIdle prints the runs' markdown section: one table, one row per
// protocol and level.
func printIdle(cfg idleConfig, runs []idleRun) {
	total := cfg.levels[len(cfg.levels)-1]
	fmt.Printf("\n### Idle SSE streams (SubscribeToTask on auth-required tasks)\n\n")
	fmt.Printf("h1: HTTP/1.1, one connection per stream; h2c: HTTP/2 cleartext (prior knowledge), %d streams per connection. ", cfg.perConn)
	if len(cfg.argv) > 0 {
		fmt.Print("Each protocol on a fresh server process.")
	} else {
		fmt.Print("Every protocol on the same server process, in the order of the table.")
	}
	fmt.Printf(" Each reading is taken %s after the streams opened", cfg.settle)
	if cfg.admin != "" {
		fmt.Printf("; the \"after GC\" one after a GC forced through Caddy's admin API (/debug/pprof/heap?gc=1) and another %s, with the live Go heap and goroutine stacks from /debug/vars", cfg.settle)
	}
	fmt.Print(". Server RSS:\n\n")
	for _, r := range runs {
		fmt.Printf("- %s: %s at start, %s with %d auth-required tasks and no stream (%.1f KB per task), peak %s\n",
			r.proto, fmtKB(r.base.rss), fmtKB(r.tasks.rss), total, float64(r.tasks.rss-r.base.rss)/float64(total), fmtKB(r.hwm))
	}
	fmt.Println()
	per := func(kb, base int64, n int) string { return fmt.Sprintf("%.1f KB", float64(kb-base)/float64(n)) }
	if cfg.admin == "" {
		fmt.Println("| protocol | open streams | connections | server RSS | added by the streams | per stream |")
		fmt.Println("|---|---:|---:|---:|---:|---:|")
		for _, run := range runs {
			for _, r := range run.rows {
				fmt.Printf("| %s | %d | %d | %s | %s | %s |\n", run.proto, r.streams, r.conns, fmtKB(r.rss), fmtKB(r.rss-run.tasks.rss), per(r.rss, run.tasks.rss, r.streams))
			}
		}
	} else {
		fmt.Println("| protocol | open streams | connections | server RSS | per stream | RSS after GC | per stream after GC | Go live heap, per stream | stacks, per stream |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, run := range runs {
			b := run.tasks
			for _, r := range run.rows {
				fmt.Printf("| %s | %d | %d | %s | %s | %s | **%s** | %s | %s |\n", run.proto, r.streams, r.conns, fmtKB(r.rss), per(r.rss, b.rss, r.streams),
					fmtKB(r.gcRSS), per(r.gcRSS, b.gcRSS, r.streams), per(r.heap, b.heap, r.streams), per(r.stack, b.stack, r.streams))
			}
		}
	}
	fmt.Println()
}

// reading is the server's memory at one moment, in KB.
type reading struct {
	rss int64
	// Only with an admin URL: after a forced GC.
	gcRSS, heap, stack int64
}

// takeReading waits settle and reads the RSS; with an admin URL it then
// forces a GC, waits settle again for the scavenger, and reads the RSS and
// the Go heap and stack in use.
func takeReading(pid int, admin string, settle time.Duration) (reading, error) {
	var r reading
	time.Sleep(settle)
	var err error
	if r.rss, err = memKB(pid, "VmRSS"); err != nil || admin == "" {
		return r, err
	}
	if err := adminGet(admin+"/debug/pprof/heap?gc=1", nil); err != nil {
		return r, err
	}
	time.Sleep(settle)
	if r.gcRSS, err = memKB(pid, "VmRSS"); err != nil {
		return r, err
	}
	var vars struct {
		Memstats struct {
			HeapAlloc  int64
			StackInuse int64
		} `json:"memstats"`
	}
	if err := adminGet(admin+"/debug/vars", &vars); err != nil {
		return r, err
	}
	r.heap, r.stack = vars.Memstats.HeapAlloc>>10, vars.Memstats.StackInuse>>10
	return r, nil
}

// adminGet GETs an admin URL and decodes its JSON into v (nil: discard).
func adminGet(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	if v == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// adminSave GETs an admin URL into a file.
func adminSave(u, file string) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
						fmt.Sprintf(`{"message":{"messageId":"idle-%d-%d","role":"ROLE_USER","parts":[{"text":"sign me in"}]}}`, w, i), false)
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
