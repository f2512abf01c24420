package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
func cmdIdle(args []string) error {
	fs := newFlags("idle")
	rpc := fs.String("rpc", "", "module JSON-RPC URL whose upstream answers auth-required")
	pid := fs.Int("pid", 0, "server process")
	levelsFlag := fs.String("levels", "1000,10000", "stream counts to measure at, ascending")
	conns := fs.Int("c", 32, "connections used to create the tasks and open the streams")
	settle := fs.Duration("settle", 3*time.Second, "wait before each RSS reading")
	admin := fs.String("admin", "", "Caddy admin URL: if set, each reading is also taken after a forced GC, with the Go heap and stack in use")
	profDir := fs.String("profiles", "", "with -admin: save heap and goroutine profiles at each level in this directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rpc == "" || *pid == 0 {
		return errors.New("-rpc and -pid are required")
	}
	var levels []int
	for _, s := range strings.Split(*levelsFlag, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || (len(levels) > 0 && n <= levels[len(levels)-1]) {
			return fmt.Errorf("-levels %q: want ascending positive counts", *levelsFlag)
		}
		levels = append(levels, n)
	}
	total := levels[len(levels)-1]

	read := func() (reading, error) { return takeReading(*pid, *admin, *settle) }
	r0, err := read()
	if err != nil {
		return err
	}
	ids, err := createAuthTasks(*rpc, total, *conns)
	if err != nil {
		return err
	}
	r1, err := read()
	if err != nil {
		return err
	}
	logf("idle: %d auth-required tasks, RSS %s → %s", total, fmtKB(r0.rss), fmtKB(r1.rss))

	var (
		held   []*conn
		closed atomic.Int64 // streams the server ended while they should idle
	)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	type row struct {
		streams int
		reading
	}
	var rows []row
	for _, level := range levels {
		cs, err := openStreams(*rpc, ids[len(held):level], *conns, &closed)
		held = append(held, cs...)
		if err != nil {
			return fmt.Errorf("opening streams %d–%d: %w", len(held)+1, level, err)
		}
		r, err := read()
		if err != nil {
			return err
		}
		rows = append(rows, row{level, r})
		if *admin != "" && *profDir != "" {
			for _, p := range []string{"heap", "goroutine"} {
				if err := adminSave(fmt.Sprintf("%s/debug/pprof/%s", *admin, p), fmt.Sprintf("%s/idle-%s-%d.pprof", *profDir, p, level)); err != nil {
					return err
				}
			}
		}
		logf("idle: %d streams open, RSS %s (after GC: %s)", level, fmtKB(r.rss), fmtKB(r.gcRSS))
	}
	if n := closed.Load(); n > 0 {
		return fmt.Errorf("the server closed %d idle streams", n)
	}
	hwm, _ := memKB(*pid, "VmHWM")
	per := func(kb, base int64, n int) string { return fmt.Sprintf("%.1f KB", float64(kb-base)/float64(n)) }
	fmt.Printf("\n### Idle SSE streams (SubscribeToTask on auth-required tasks, HTTP/1.1, one connection each)\n\n")
	fmt.Printf("Server RSS: %s at start, %s with %d auth-required tasks and no stream (%.1f KB per task), peak %s. ",
		fmtKB(r0.rss), fmtKB(r1.rss), total, float64(r1.rss-r0.rss)/float64(total), fmtKB(hwm))
	fmt.Printf("Each reading is taken %s after the streams opened", *settle)
	if *admin != "" {
		fmt.Printf("; the \"after GC\" one after a GC forced through Caddy's admin API (/debug/pprof/heap?gc=1) and another %s, with the live Go heap and goroutine stacks from /debug/vars", *settle)
	}
	fmt.Print(".\n\n")
	if *admin == "" {
		fmt.Println("| open streams | server RSS | added by the streams | per stream |")
		fmt.Println("|---:|---:|---:|---:|")
		for _, r := range rows {
			fmt.Printf("| %d | %s | %s | %s |\n", r.streams, fmtKB(r.rss), fmtKB(r.rss-r1.rss), per(r.rss, r1.rss, r.streams))
		}
	} else {
		fmt.Println("| open streams | server RSS | per stream | RSS after GC | per stream after GC | Go live heap, per stream | stacks, per stream |")
		fmt.Println("|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range rows {
			fmt.Printf("| %d | %s | %s | %s | **%s** | %s | %s |\n", r.streams, fmtKB(r.rss), per(r.rss, r1.rss, r.streams),
				fmtKB(r.gcRSS), per(r.gcRSS, r1.gcRSS, r.streams), per(r.heap, r1.heap, r.streams), per(r.stack, r1.stack, r.streams))
		}
	}
	fmt.Println()
	return nil
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

// openStreams opens one SubscribeToTask stream per id, each on its own
// connection, and returns once every stream has delivered its first frame
// (the auth-required task). A goroutine per stream then keeps reading so a
// stream the server closes is counted in closed.
func openStreams(rpc string, ids []string, par int, closed *atomic.Int64) ([]*conn, error) {
	out := make([]*conn, len(ids))
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) {
					return
				}
				c, sr, err := subscribe(rpc, ids[i])
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				out[i] = c
				go func() {
					for {
						if _, err := sr.next(); err != nil {
							closed.Add(1)
							return
						}
					}
				}()
			}
		}()
	}
	wg.Wait()
	out = slices.DeleteFunc(out, func(c *conn) bool { return c == nil })
	if first != nil {
		return out, first
	}
	return out, nil
}

func subscribe(rpc, id string) (*conn, *sseReader, error) {
	req, addr, err := rpcRequest(rpc, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, id), true)
	if err != nil {
		return nil, nil, err
	}
	c, err := dial(addr)
	if err != nil {
		return nil, nil, err
	}
	if err := c.send(req); err != nil {
		c.Close()
		return nil, nil, err
	}
	resp, err := c.readHead()
	if err == nil && resp.Status != 200 {
		err = fmt.Errorf("HTTP %d", resp.Status)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	sr := newSSEReader(c, &resp)
	data, err := sr.next()
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	f, err := decodeFrame(data)
	if err == nil && (f.Result.Task == nil || f.Result.Task.Status.State != "TASK_STATE_AUTH_REQUIRED") {
		err = fmt.Errorf("first frame is not the auth-required task: %.200s", data)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, sr, nil
}
