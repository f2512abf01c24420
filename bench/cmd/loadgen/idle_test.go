package main

import (
	"encoding/json"
	"expvar"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// idleServer answers SubscribeToTask like the module on an auth-required
// task on /a2a, and the same POST like a hold server (one holdComment line)
// on /hold, over HTTP/1.1 and HTTP/2 cleartext, allowing maxStreams streams
// per HTTP/2 connection. Task "working" gets a wrong first frame (on /hold
// a wrong comment), task "drop" a stream that ends right after it; every
// other stream stays open until the client leaves. open counts the streams
// open now, h2 those that came over HTTP/2.
func idleServer(t *testing.T, maxStreams int) (srv *httptest.Server, open, h2 *atomic.Int64) {
	open, h2 = new(atomic.Int64), new(atomic.Int64)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string `json:"method"`
			Params struct {
				ID string `json:"id"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "SubscribeToTask" ||
			r.Header.Get("A2A-Version") != "1.0" || r.Header.Get("Accept") != "text/event-stream" ||
			(r.URL.Path != "/a2a" && r.URL.Path != "/hold") {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		switch {
		case r.URL.Path == "/hold" && req.Params.ID == "working":
			fmt.Fprint(w, ": nope\n\n")
		case r.URL.Path == "/hold":
			fmt.Fprint(w, holdComment+"\n\n")
		default:
			state := "TASK_STATE_AUTH_REQUIRED"
			if req.Params.ID == "working" {
				state = "TASK_STATE_WORKING"
			}
			fmt.Fprintf(w, ": hello\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":%q,\"status\":{\"state\":%q}}}}\n\n", req.Params.ID, state)
		}
		w.(http.Flusher).Flush()
		if req.Params.ID == "drop" {
			return
		}
		open.Add(1)
		defer open.Add(-1)
		<-r.Context().Done()
	}))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, open, h2
}

// kinds are the two kinds of idle stream: where they go and how their
// first frame is checked.
var kinds = []struct {
	name, path string
	check      func(*sseReader) error
	wrongFirst string // the error of a wrong first frame
}{
	{idleA2A, "/a2a", checkFirstFrame, "first frame is not the auth-required task"},
	{idleHold, "/hold", checkHoldComment, `first line is not ": hold"`},
}

// waitFor polls cond until it holds or a second has passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("after 1 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOpenStreams opens five streams over each protocol, two per
// connection for h2c, and checks they land where they should and stay
// open until closed.
func TestOpenStreams(t *testing.T) {
	for _, tc := range []struct {
		proto     string
		wantConns int
		wantH2    int64
	}{
		{"h1", 5, 0},
		{"h2c", 3, 5},
	} {
		for _, k := range kinds {
			t.Run(tc.proto+"/"+k.name, func(t *testing.T) {
				srv, open, h2 := idleServer(t, 3)
				o, err := newOpener(tc.proto, srv.URL+k.path, 2, k.check)
				if err != nil {
					t.Fatal(err)
				}
				defer o.close()
				var closed atomic.Int64
				ids := []string{"t1", "t2", "t3", "t4", "t5"}
				// Two batches, as the idle command opens its levels.
				ss, err := openStreams(o, 0, ids[:2], 4, &closed)
				defer func() { closeAll(ss) }()
				if err != nil {
					t.Fatal(err)
				}
				more, err := openStreams(o, 2, ids[2:], 4, &closed)
				ss = append(ss, more...)
				if err != nil {
					t.Fatal(err)
				}
				if len(ss) != 5 || o.conns() != tc.wantConns || h2.Load() != tc.wantH2 {
					t.Fatalf("%d streams on %d connections, %d over HTTP/2; want 5 on %d, %d", len(ss), o.conns(), h2.Load(), tc.wantConns, tc.wantH2)
				}
				waitFor(t, "5 streams open on the server", func() bool { return open.Load() == 5 })
				if n := closed.Load(); n != 0 {
					t.Fatalf("%d streams ended", n)
				}
				closeAll(ss)
				ss = nil
				waitFor(t, "no stream open on the server", func() bool { return open.Load() == 0 })
			})
		}
	}
}

// TestOpenStreamsFailures checks that a wrong first frame, a stream the
// server ends, and an h2c stream beyond the server's limit are all
// counted, never taken for an idle stream.
func TestOpenStreamsFailures(t *testing.T) {
	for _, proto := range []string{"h1", "h2c"} {
		for _, k := range kinds {
			t.Run(proto+"/"+k.name+"/wrong first frame", func(t *testing.T) {
				srv, _, _ := idleServer(t, 10)
				o, _ := newOpener(proto, srv.URL+k.path, 5, k.check)
				defer o.close()
				var closed atomic.Int64
				ss, err := openStreams(o, 0, []string{"t1", "working"}, 1, &closed)
				defer closeAll(ss)
				if err == nil || !strings.HasPrefix(err.Error(), "stream 2: "+k.wrongFirst) || len(ss) != 1 {
					t.Fatalf("%d streams open, err %v", len(ss), err)
				}
			})
			t.Run(proto+"/"+k.name+"/stream ended", func(t *testing.T) {
				srv, _, _ := idleServer(t, 10)
				o, _ := newOpener(proto, srv.URL+k.path, 5, k.check)
				defer o.close()
				var closed atomic.Int64
				ss, err := openStreams(o, 0, []string{"t1", "drop", "t3"}, 2, &closed)
				defer closeAll(ss)
				if err != nil {
					t.Fatal(err)
				}
				waitFor(t, "one stream counted as ended", func() bool { return closed.Load() == 1 })
			})
		}
	}
	t.Run("h2c/over the server's stream limit", func(t *testing.T) {
		srv, _, _ := idleServer(t, 2)
		o := &h2cOpener{rpc: srv.URL + "/a2a", check: checkFirstFrame, perConn: 3, timeout: 300 * time.Millisecond}
		defer o.close()
		var closed atomic.Int64
		// One at a time, so the server's limit is known to the client
		// by the third stream, which then waits for a free slot in vain.
		// (Opened at once, a stream may be refused instead: an error too.)
		ss, err := openStreams(o, 0, []string{"t1", "t2", "t3"}, 1, &closed)
		defer closeAll(ss)
		if err == nil || !strings.HasPrefix(err.Error(), "stream 3: no answer within 300ms") || len(ss) != 2 {
			t.Fatalf("%d streams open, err %v; want 2 and stream 3 timed out", len(ss), err)
		}
	})
}

func closeAll(ss []io.Closer) {
	for _, s := range ss {
		s.Close()
	}
}

// adminServer serves what the idle command reads from Caddy's admin API
// (forced GC, memstats, goroutine count) for this very process, with the
// same handlers Caddy uses.
func adminServer(t *testing.T) string {
	mux := http.NewServeMux()
	mux.Handle("/debug/vars", expvar.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestMeasureIdleHold measures this process as a hold server over each
// protocol, two levels, with the admin readings: every level must count
// its streams and connections, and hold at least the two goroutines each
// open stream parks here (the server's handler, the generator's reader).
func TestMeasureIdleHold(t *testing.T) {
	admin := adminServer(t)
	for _, tc := range []struct {
		proto     string
		wantConns []int
	}{
		{"h1", []int{2, 5}},
		{"h2c", []int{1, 3}},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			srv, open, _ := idleServer(t, 10)
			tg := &idleTarget{name: "baseline", kind: idleHold, url: srv.URL + "/hold", pid: os.Getpid()}
			cfg := idleConfig{levels: []int{2, 5}, perConn: 2, conns: 3, settle: 10 * time.Millisecond, admin: admin}
			run, err := measureIdle(cfg, tg, tc.proto)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.rows) != 2 {
				t.Fatalf("%d rows, want 2", len(run.rows))
			}
			for i, r := range run.rows {
				if r.streams != cfg.levels[i] || r.conns != tc.wantConns[i] {
					t.Errorf("row %d: %d streams on %d connections, want %d on %d", i, r.streams, r.conns, cfg.levels[i], tc.wantConns[i])
				}
				if added := r.goroutines - run.ready.goroutines; added < int64(2*r.streams) {
					t.Errorf("row %d: %d goroutines added by %d streams, want at least %d", i, added, r.streams, 2*r.streams)
				}
				if r.rss <= 0 || r.gcRSS <= 0 || r.heap <= 0 || r.stack <= 0 {
					t.Errorf("row %d: a reading is missing: %+v", i, r.reading)
				}
			}
			waitFor(t, "every stream closed once measured", func() bool { return open.Load() == 0 })
		})
	}
}

func TestParseIdleTargets(t *testing.T) {
	for _, tc := range []struct {
		flags   []string
		args    []string
		want    []idleTarget // name, kind, url, addr, pid, argv
		wantErr string
	}{
		{
			flags: []string{"name=caddy-a2a,kind=a2a,url=http://127.0.0.1:9408/a2a", "name=reverse_proxy,kind=hold,url=http://127.0.0.1:9408/hold/30m"},
			args:  []string{"caddy", "run", "--config", "a.caddyfile", "--", "caddy", "run", "--config", "p.caddyfile"},
			want: []idleTarget{
				{name: "caddy-a2a", kind: idleA2A, url: "http://127.0.0.1:9408/a2a", addr: "127.0.0.1:9408", argv: []string{"caddy", "run", "--config", "a.caddyfile"}},
				{name: "reverse_proxy", kind: idleHold, url: "http://127.0.0.1:9408/hold/30m", addr: "127.0.0.1:9408", argv: []string{"caddy", "run", "--config", "p.caddyfile"}},
			},
		},
		{
			flags: []string{"name=a,kind=a2a,url=http://h:1/a2a,pid=42", "name=b,kind=hold,url=http://h:2/hold"},
			args:  []string{"srv"},
			want: []idleTarget{
				{name: "a", kind: idleA2A, url: "http://h:1/a2a", addr: "h:1", pid: 42},
				{name: "b", kind: idleHold, url: "http://h:2/hold", addr: "h:2", argv: []string{"srv"}},
			},
		},
		{flags: []string{"name=a,kind=a2a,url=http://h:1/a2a"}, args: []string{"x", "--", "y"}, wantErr: "1 targets without a pid, 2 server commands: want one command each"},
		{flags: []string{"name=a,kind=a2a,url=http://h:1/a2a"}, args: []string{"x", "--"}, wantErr: `an empty server command (two "--" in a row, or one at the end)`},
		{flags: []string{"name=a,kind=a2a,url=http://h:1/a2a"}, wantErr: "1 targets without a pid, 0 server commands: want one command each"},
		{flags: []string{"name=a,kind=sse,url=http://h:1/"}, wantErr: `target "name=a,kind=sse,url=http://h:1/": kind "sse": want a2a or hold`},
		{flags: []string{"name=a,url=http://h:1/"}, wantErr: `target "name=a,url=http://h:1/": name, kind and url are required`},
		{flags: []string{"name=a,kind=a2a,url=http://h:1/,up=3"}, wantErr: `target "name=a,kind=a2a,url=http://h:1/,up=3": unknown key "up"`},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			var ts idleTargetFlags
			var err error
			for _, f := range tc.flags {
				if err = ts.Set(f); err != nil {
					break
				}
			}
			if err == nil {
				err = assignCommands(ts, tc.args)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != len(tc.want) {
				t.Fatalf("%d targets, want %d", len(ts), len(tc.want))
			}
			for i, got := range ts {
				w := tc.want[i]
				if got.name != w.name || got.kind != w.kind || got.url != w.url || got.addr != w.addr || got.pid != w.pid || !slices.Equal(got.argv, w.argv) {
					t.Errorf("target %d: %+v, want %+v", i, *got, w)
				}
			}
		})
	}
}

// TestPrintIdleFloor prints made-up runs of a module, a floor and a
// reference over h1: the main table has every target, the difference
// table only the module minus the floor, with the numbers worked out by
// hand; without a floor there is no difference table.
func TestPrintIdleFloor(t *testing.T) {
	mod := &idleTarget{name: "mod", kind: idleA2A, argv: []string{"m"}}
	floor := &idleTarget{name: "floor", kind: idleHold, argv: []string{"f"}}
	ref := &idleTarget{name: "ref", kind: idleHold, argv: []string{"r"}}
	targets := []*idleTarget{mod, floor, ref}
	cfg := idleConfig{levels: []int{1000}, perConn: 200, conns: 32, settle: 3 * time.Second, admin: "http://admin"}
	run := func(tg *idleTarget, ready, at reading) idleRun {
		return idleRun{target: tg, proto: "h1", base: reading{rss: 50000}, ready: ready, hwm: 200000, rows: []idleRow{{1000, 1000, at}}}
	}
	runs := []idleRun{
		// 50.0 KB per stream after GC, 38.0 KB of heap + stacks, 1 goroutine.
		run(mod, reading{rss: 100000, gcRSS: 90000, heap: 20000, stack: 1000, goroutines: 50},
			reading{rss: 150000, gcRSS: 140000, heap: 40000, stack: 19000, goroutines: 1050}),
		// 37.8 KB, 34.0 KB, 1 goroutine.
		run(floor, reading{rss: 61000, gcRSS: 60000, heap: 10000, stack: 500, goroutines: 40},
			reading{rss: 99000, gcRSS: 97800, heap: 28000, stack: 16500, goroutines: 1040}),
		// 70.0 KB, 60.0 KB, 2 goroutines.
		run(ref, reading{rss: 61000, gcRSS: 60000, heap: 10000, stack: 500, goroutines: 40},
			reading{rss: 131000, gcRSS: 130000, heap: 50000, stack: 20500, goroutines: 2040}),
	}
	var b strings.Builder
	printIdle(&b, cfg, targets, floor, []string{"h1"}, runs)
	out := b.String()
	for _, want := range []string{
		"\n### Idle SSE streams: mod, floor and ref\n",
		"\n- floor: the same POST (Accept: text/event-stream), answered by the least a handler can do to hold a stream: read the body, write one SSE comment (checked), flush, wait for the client. What any handler holding a request open costs this server: the floor.\n",
		"\n- ref: the same POST (Accept: text/event-stream), answered with one SSE comment (checked) that the server flushes before it holds the stream open.\n",
		"\n| mod | h1 | 1000 | 1000 | 146.5 MB | 50.0 KB | 136.7 MB | **50.0 KB** | 20.0 KB | 18.0 KB | 1.00 |\n",
		"\n| floor | h1 | 1000 | 1000 | 96.7 MB | 38.0 KB | 95.5 MB | **37.8 KB** | 18.0 KB | 16.0 KB | 1.00 |\n",
		"\n| ref | h1 | 1000 | 1000 | 127.9 MB | 70.0 KB | 127.0 MB | **70.0 KB** | 40.0 KB | 20.0 KB | 2.00 |\n",
		"\nPer idle stream: mod; the floor, floor; and the difference, mod's own cost beyond what any handler holding a stream costs",
		"\n| protocol | open streams | RSS after GC: mod | floor | **difference** | heap + stacks: mod | floor | **difference** | goroutines: mod | floor |\n",
		"\n| h1 | 1000 | 50.0 KB | 37.8 KB | **+12.2 KB** | 38.0 KB | 34.0 KB | **+4.0 KB** | 1.00 | 1.00 |\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "Per idle stream:"); n != 1 {
		t.Errorf("%d difference tables, want 1 (the module's)", n)
	}
	b.Reset()
	printIdle(&b, cfg, targets, nil, []string{"h1"}, runs)
	if strings.Contains(b.String(), "Per idle stream:") {
		t.Errorf("a difference table without a floor:\n%s", b.String())
	}
}

func TestFindFloor(t *testing.T) {
	targets := []*idleTarget{{name: "mod", kind: idleA2A}, {name: "floor", kind: idleHold}, {name: "ref", kind: idleHold}}
	for _, tc := range []struct {
		name, want, wantErr string
	}{
		{name: "", want: ""},
		{name: "floor", want: "floor"},
		{name: "ref", want: "ref"},
		{name: "mod", wantErr: `-floor "mod": a target of kind a2a, want hold`},
		{name: "none", wantErr: `-floor "none": no such target`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findFloor(targets, tc.name)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == "") || (got != nil && got.name != tc.want) {
				t.Fatalf("got %+v, want %q", got, tc.want)
			}
		})
	}
}
