package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"
)

// cmdStoreRelay measures what keeping the tasks in Redis adds to a
// streamed chunk: the same paced NDJSON stream read directly, through the
// module with the memory store and through the module with the Redis
// store, all at the same time.
func cmdStoreRelay(args []string) error {
	fs := newFlags("storerelay")
	direct := fs.String("direct", "", "upstream NDJSON URL (its chunk count and pace must match the modules' upstream)")
	memory := fs.String("memory", "", "module JSON-RPC URL with the memory store, whose upstream is that stream")
	redis := fs.String("redis", "", "module JSON-RPC URL with the store measured (store redis unless -store says), whose upstream is that stream")
	storeName := fs.String("store", "store redis", "the store measured, for the table (e.g. \"store postgres\")")
	how := fs.String("how", "", "how that store reaches its server, for the table (e.g. \"unix socket\"; default: not said)")
	redisAddr := fs.String("redis-addr", "", "optional host:port of that Redis: the table says how many keys and bytes it held when the run began")
	chunks := fs.Int("chunks", 500, "chunks per stream (as the upstream URL says)")
	streams := fs.Int("streams", 4, "concurrent streams per path")
	dur := fs.Duration("d", 10*time.Second, "duration (all paths at once)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *direct == "" || *memory == "" || *redis == "" {
		return errors.New("-direct, -memory and -redis are required")
	}
	d := &relayPath{name: "upstream read directly", read: func(_ int, f chunkFunc) (int, error) { return readDirect(*direct, f) }}
	m := &relayPath{name: "through caddy-a2a, store memory", read: func(seq int, f chunkFunc) (int, error) { return readA2A(*memory, seq, f) }}
	store := *storeName
	if *how != "" {
		store += " (" + *how + ")"
	}
	r := &relayPath{name: "through caddy-a2a, " + store, read: func(seq int, f chunkFunc) (int, error) { return readA2A(*redis, seq, f) }}
	paths := []*relayPath{d, m, r}
	held := redisHeld(*redisAddr)
	runRelayPaths(paths, *streams, *chunks, *dur)
	fmt.Printf("\n### Chunk latency by store: upstream write → client read, %d streams of %d chunks per path (paced by the upstream), all paths at once for %s%s\n\n",
		*streams, *chunks, *dur, held)
	printRelayTable(paths, []addedRow{
		{"**added by caddy-a2a, store memory**", m, d},
		{"**added by caddy-a2a, " + store + "**", r, d},
		{"**" + store + " − store memory**", r, m},
	})
	if failedPaths(paths) {
		return errors.New("storerelay: streams failed")
	}
	return nil
}

// cmdReplicas measures how soon a replica that does not run a task shows
// its events: a SendStreamingMessage to replica A (whose upstream is a
// paced NDJSON stream of timestamps) runs the task there; as soon as A's
// first frame names the task, SubscribeToTask on replica B follows it. The
// chunks B relays reached it through Redis; their latency is the
// upstream's write to B's client reading them. A's own stream, and the
// upstream read directly, are measured at the same time.
func cmdReplicas(args []string) error {
	fs := newFlags("replicas")
	direct := fs.String("direct", "", "upstream NDJSON URL (its chunk count and pace must match the replicas' upstream)")
	a := fs.String("a", "", "JSON-RPC URL of replica A (runs the tasks)")
	b := fs.String("b", "", "JSON-RPC URL of replica B (same Redis and key_prefix, or the same database and schema; subscribes)")
	via := fs.String("via", "Redis", "what the replicas share, for the table (Redis, PostgreSQL)")
	redisAddr := fs.String("redis-addr", "", "optional host:port of their Redis: the table says how many keys and bytes it held when the run began")
	chunks := fs.Int("chunks", 500, "chunks per stream (as the upstream URL says)")
	streams := fs.Int("streams", 4, "concurrent tasks (and direct reads)")
	dur := fs.Duration("d", 10*time.Second, "duration")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *direct == "" || *a == "" || *b == "" {
		return errors.New("-direct, -a and -b are required")
	}
	d := &relayPath{name: "upstream read directly", read: func(_ int, f chunkFunc) (int, error) { return readDirect(*direct, f) }}
	onA := &relayPath{name: "replica A, the stream that runs the task"}
	onB := &relayPath{name: "replica B, SubscribeToTask (through " + *via + ")"}
	var (
		mu     sync.Mutex // guards onA and missed
		missed int        // chunks B's subscription began after (in its task snapshot)
	)
	onB.read = func(seq int, f chunkFunc) (int, error) {
		la, lb, err := readReplicaPair(*a, *b, seq, *chunks)
		if err != nil {
			return 0, err
		}
		mu.Lock()
		onA.lat = append(onA.lat, la...)
		missed += *chunks - len(lb)
		mu.Unlock()
		// f records read − sent: a sent of 0 and the latency as the
		// read time record B's latencies as readReplicaPair measured them.
		for _, ns := range lb {
			f(0, time.Unix(0, ns))
		}
		// runRelayPaths wants every chunk of the stream; B holds the ones
		// after its subscription began, checked against A's by
		// readReplicaPair.
		return *chunks, nil
	}
	paths := []*relayPath{d, onB}
	held := redisHeld(*redisAddr)
	runRelayPaths(paths, *streams, *chunks, *dur)
	slices.Sort(onA.lat)
	all := []*relayPath{d, onA, onB}
	fmt.Printf("\n### Two replicas, one %s: upstream write → client read on the replica that runs the task (A) and on the other (B, SubscribeToTask), %d tasks at a time of %d chunks (paced by the upstream) for %s%s\n\n",
		*via, *streams, *chunks, *dur, held)
	printRelayTable(all, []addedRow{
		{"**added on A (runs the task)**", onA, d},
		{"**added on B (through " + *via + ")**", onB, d},
		{"**B − A**", onB, onA},
	})
	fmt.Printf("B's subscriptions began after %d of the tasks' chunks in all (%.1f per task; those came in B's first frame, the task, and are not counted).\n\n",
		missed, float64(missed)/float64(max(len(onA.lat)/max(*chunks, 1), 1)))
	if failedPaths(paths) {
		return errors.New("replicas: streams failed")
	}
	return nil
}

// readReplicaPair runs one task on replica a (SendStreamingMessage) and
// follows it on replica b (SubscribeToTask) from the moment a names it. It
// returns the latencies (ns, read time − chunk timestamp) of a's chunks and
// of b's. B must relay the same chunks as A from the one its subscription
// began at, nothing more or other, and end with the completed status.
func readReplicaPair(aURL, bURL string, seq, chunks int) (latA, latB []int64, err error) {
	srA, closeA, err := openStream(aURL, fmt.Sprintf("rep-%d", seq))
	if err != nil {
		return nil, nil, fmt.Errorf("replica A: %w", err)
	}
	defer closeA()
	data, err := srA.next()
	if err != nil {
		return nil, nil, fmt.Errorf("replica A: %w", err)
	}
	f, err := decodeFrame(data)
	if err != nil {
		return nil, nil, fmt.Errorf("replica A: %w", err)
	}
	if f.Result.Task == nil || f.Result.Task.ID == "" {
		return nil, nil, fmt.Errorf("replica A: first frame is not a task: %.200s", data)
	}
	id := f.Result.Task.ID
	srB, closeB, err := openSubscription(bURL, id)
	if err != nil {
		return nil, nil, fmt.Errorf("replica B: %w", err)
	}
	defer closeB()
	type side struct {
		ts, read []int64
		err      error
	}
	var sa side
	done := make(chan struct{})
	go func() {
		defer close(done)
		sa.ts, sa.read, sa.err = readChunkUpdates(srA, id)
	}()
	var sb side
	data, err = srB.next()
	if err == nil {
		f, err = decodeFrame(data)
		if err == nil && (f.Result.Task == nil || f.Result.Task.ID != id) {
			err = fmt.Errorf("first frame is not task %s: %.200s", id, data)
		}
	}
	if err == nil {
		sb.ts, sb.read, sb.err = readChunkUpdates(srB, id)
	} else {
		sb.err = err
	}
	<-done
	switch {
	case sa.err != nil:
		return nil, nil, fmt.Errorf("replica A: %w", sa.err)
	case sb.err != nil:
		return nil, nil, fmt.Errorf("replica B: %w", sb.err)
	case len(sa.ts) != chunks:
		return nil, nil, fmt.Errorf("replica A: %d chunks, want %d", len(sa.ts), chunks)
	case len(sb.ts) == 0:
		return nil, nil, errors.New("replica B: no chunk after its subscription began")
	case !slices.Equal(sb.ts, sa.ts[len(sa.ts)-len(sb.ts):]):
		return nil, nil, fmt.Errorf("replica B: its %d chunks are not the last %d of A's", len(sb.ts), len(sb.ts))
	}
	lat := func(s side) []int64 {
		out := make([]int64, len(s.ts))
		for i := range s.ts {
			out[i] = s.read[i] - s.ts[i]
		}
		return out
	}
	return lat(sa), lat(sb), nil
}

// openSubscription sends SubscribeToTask for task id to rpcURL on a
// connection of its own and returns the SSE answer once its head says it
// is one.
func openSubscription(rpcURL, id string) (*sseReader, func(), error) {
	req, addr, err := rpcRequest(rpcURL, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, id), true)
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
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if resp.Status != 200 || len(resp.ContentType) < 17 || resp.ContentType[:17] != "text/event-stream" {
		c.Close()
		return nil, nil, fmt.Errorf("HTTP %d %s", resp.Status, resp.ContentType)
	}
	return newSSEReader(c, &resp), func() { c.Close() }, nil
}

// readChunkUpdates reads the frames after the task frame of a stream of
// task id whose upstream is an NDJSON stream of timestamps: artifact
// updates of one timestamp each (in increasing order), the empty closing
// chunk, the completed status, the end. It returns each chunk's timestamp
// and the time (ns) its frame was read.
func readChunkUpdates(sr *sseReader, id string) (ts, read []int64, err error) {
	var final string
	closed := false
	for {
		data, err := sr.next()
		now := time.Now().UnixNano()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ts, read, err
		}
		f, err := decodeFrame(data)
		if err != nil {
			return ts, read, err
		}
		switch r := f.Result; {
		case final != "":
			return ts, read, fmt.Errorf("a frame after the final status: %.200s", data)
		case r.Task != nil:
			return ts, read, errors.New("task frame after the first")
		case r.ArtifactUpdate != nil:
			u := r.ArtifactUpdate
			if u.TaskID != id || closed || len(u.Artifact.Parts) != 1 {
				return ts, read, fmt.Errorf("unexpected artifact update: %.200s", data)
			}
			if u.LastChunk {
				if u.Artifact.Parts[0].Text != "" || !u.Append {
					return ts, read, fmt.Errorf("closing chunk: %.200s", data)
				}
				closed = true
				continue
			}
			v, err := strconv.ParseInt(u.Artifact.Parts[0].Text, 10, 64)
			if err != nil || (len(ts) > 0 && v <= ts[len(ts)-1]) {
				return ts, read, fmt.Errorf("chunk %d: bad or out-of-order timestamp %q", len(ts), u.Artifact.Parts[0].Text)
			}
			ts = append(ts, v)
			read = append(read, now)
		case r.StatusUpdate != nil:
			if r.StatusUpdate.TaskID != id {
				return ts, read, fmt.Errorf("status update of task %q, want %q", r.StatusUpdate.TaskID, id)
			}
			switch s := r.StatusUpdate.Status.State; s {
			case "TASK_STATE_WORKING":
			case "TASK_STATE_COMPLETED":
				final = s
			default:
				return ts, read, fmt.Errorf("status %q", s)
			}
		default:
			return ts, read, fmt.Errorf("frame holds no event: %.200s", data)
		}
	}
	if final == "" || !closed {
		return ts, read, fmt.Errorf("stream ended in state %q (closing chunk seen: %v), want TASK_STATE_COMPLETED", final, closed)
	}
	return ts, read, nil
}
