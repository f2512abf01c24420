package redisstore

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// BenchmarkClient measures the client on the store's hot operations
// against a local redis-server: the Update script (version compare-and-set,
// snapshot, one event, index move), a Send (what a blocking send asks
// of Redis: the Create of a working task with two events, then the
// Update that settles it with two more and its expiry; it reports the
// microseconds Redis spent on each, from INFO commandstats), a Get (HMGET of the task hash), and
// Gets from 16 goroutines at once (how a server with many streams reads).
//
// It chose the client. Run with github.com/redis/go-redis/v9 v9.23.0 as a
// second sub-benchmark doing the same commands (redis.NewScript(...).Run,
// HMGet), on a 2-CPU machine with a local redis-server 7.0, three
// interleaved runs each, ns/op (allocs/op):
//
//	                 go-redis v9.23.0            rueidis v1.0.80
//	Update           63k-132k (20 allocs)        53k-166k (4 allocs)
//	Get              25k-97k (19 allocs)         24k-90k (5 allocs)
//	GetParallel      14k-21k                     7.7k-12.9k
//
// The sequential round trips are within the machine's noise of each
// other; under concurrency rueidis' automatic pipelining serves 1.5-1.8
// times the reads, with a quarter of the allocations, so the store uses
// rueidis.
func BenchmarkClient(b *testing.B) {
	addr, _ := startRedis(b)
	u, _ := url.Parse(addr)
	ctx := context.Background()
	task := &protocol.Task{ID: "t", ContextID: "c", Status: protocol.TaskStatus{State: protocol.StateWorking, Timestamp: time.Unix(1, 0).UTC()},
		History: []protocol.Message{{ID: "m", Role: protocol.RoleUser, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "hello there"}}}}}
	snap := pack.EncodeTask(nil, task)
	ev := pack.EncodeEvent(nil, "t", &protocol.Event{Artifact: &protocol.ArtifactUpdate{TaskID: "t", Artifact: protocol.Artifact{ID: "a", Parts: []protocol.Part{{Kind: protocol.PartText, Text: "chunk"}}}, Append: true}})
	args := func(mode string, v uint64) []string {
		return []string{mode, fmt.Sprint(v), "alice", string(snap), "2", tsHex(task.Status.Timestamp), "c", "0", "100000000", "0", "bench:", "t", "10000", string(ev)}
	}
	tk := taskKeys("bench:", "t")
	keys := append(tk[:], "bench:runs")
	{
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{u.Host}, DisableCache: true})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		c.Do(ctx, c.B().Flushall().Build())
		sc := rueidis.NewLuaScript(luaWrite)
		a := args("c", 0)
		if _, err := sc.Exec(ctx, c, keys, a).ToArray(); err != nil {
			b.Fatal(err)
		}
		v := int64(1)
		b.Run("Update", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a[0], a[1] = "u", fmt.Sprint(v)
				r, err := sc.Exec(ctx, c, keys, a).ToArray()
				if err != nil {
					b.Fatal(err)
				}
				if s, _ := r[0].ToString(); s != "ok" {
					b.Fatal(s)
				}
				v, _ = r[1].AsInt64()
			}
		})
		b.Run("Send", func(b *testing.B) {
			b.ReportAllocs()
			before := scriptMicros(b, c)
			run := time.Now().UnixNano()
			i := 0
			for b.Loop() {
				i++
				id := fmt.Sprint("s", run, "-", i)
				tk := taskKeys("bench:", id)
				keys := append(tk[:], "bench:runs")
				a := args("c", 0)
				a = append(a, string(ev))
				a[2], a[11] = "", id // the anonymous owner, as bench/run.sh sends
				r, err := sc.Exec(ctx, c, keys, a).ToArray()
				if err != nil {
					b.Fatal(err)
				}
				if s, _ := r[0].ToString(); s != "ok" {
					b.Fatal("create: ", s)
				}
				a[0], a[1], a[4], a[7] = "u", "1", "3", "3600000"
				if r, err = sc.Exec(ctx, c, keys, a).ToArray(); err != nil {
					b.Fatal(err)
				}
				if s, _ := r[0].ToString(); s != "ok" {
					b.Fatal(s)
				}
			}
			b.ReportMetric((scriptMicros(b, c)-before)/float64(i), "redis-µs/send")
		})
		b.Run("GetParallel", func(b *testing.B) {
			b.SetParallelism(8) // 16 goroutines on 2 CPUs
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.Do(ctx, c.B().Hmget().Key(keys[0]).Field("o", "v", "s", "n").Build()).Error(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("Get", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := c.Do(ctx, c.B().Hmget().Key(keys[0]).Field("o", "v", "s", "n").Build()).ToArray()
				if err != nil {
					b.Fatal(err)
				}
				if s, _ := r[0].ToString(); s != "alice" {
					b.Fatal(s)
				}
			}
		})
	}
}

// BenchmarkStore runs the store benchmarks of the conformance suite.
func BenchmarkStore(b *testing.B) {
	url, _ := startRedis(b)
	storetest.Bench(b, func(b *testing.B) store.Store {
		return newStore(b, url, Options{KeyPrefix: newPrefix(), MaxTasksPerOwner: -1})
	})
}

// scriptMicros is the time Redis has spent in EVALSHA, in microseconds.
func scriptMicros(b *testing.B, c rueidis.Client) float64 {
	info, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
			for _, kv := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(kv, "usec="); ok {
					n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
					return n
				}
			}
		}
	}
	return 0
}
