package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// chunkFunc receives each upstream chunk's timestamp (ns) and the time its
// frame or line was read.
type chunkFunc func(sent int64, read time.Time)

// readDirect reads an upstream NDJSON stream (GET rawURL) and returns how
// many chunks it held. Timestamps must increase.
func readDirect(rawURL string, onChunk chunkFunc) (int, error) {
	req, addr, err := getRequest(rawURL)
	if err != nil {
		return 0, err
	}
	return readStamps(req, addr, func(line []byte) (int64, bool, error) {
		ts, err := chunkStamp(line)
		return ts, true, err
	}, onChunk)
}

// readDirectChat reads a chat completions stream (SSE, POST rawURL) whose
// deltas are timestamps, as readDirect reads NDJSON: the model server the
// openai upstream calls, read by the client itself.
func readDirectChat(rawURL string, onChunk chunkFunc) (int, error) {
	req, addr, err := postRequest(rawURL, `{"model":"bench","stream":true,"messages":[{"role":"user","content":"go"}]}`)
	if err != nil {
		return 0, err
	}
	return readStamps(req, addr, func(line []byte) (int64, bool, error) {
		_, v, ok := bytes.Cut(line, []byte(`"content":"`))
		if !ok {
			return 0, false, nil // the blank line between events, the finish chunk, [DONE]
		}
		v, _, _ = bytes.Cut(v, []byte(`"`))
		ts, err := strconv.ParseInt(string(v), 10, 64)
		return ts, true, err
	}, onChunk)
}

// readStamps sends req to addr on a connection of its own and reads the
// answer line by line: stamp gives a line's timestamp (ok false: a line
// without one), which must increase.
func readStamps(req []byte, addr string, stamp func(line []byte) (int64, bool, error), onChunk chunkFunc) (int, error) {
	c, err := dial(addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.send(req); err != nil {
		return 0, err
	}
	resp, err := c.readHead()
	if err != nil {
		return 0, err
	}
	if resp.Status != 200 {
		return 0, fmt.Errorf("upstream HTTP %d", resp.Status)
	}
	br := newSSEReader(c, &resp).br
	n := 0
	var last int64
	for {
		line, err := br.ReadSlice('\n')
		now := time.Now()
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		ts, ok, err := stamp(line)
		if err != nil {
			return n, err
		}
		if !ok {
			continue
		}
		if ts <= last {
			return n, fmt.Errorf("chunk %d out of order", n)
		}
		last = ts
		n++
		onChunk(ts, now)
	}
}

// chunkStamp reads the timestamp of {"text":"<ns>"}.
func chunkStamp(line []byte) (int64, error) {
	_, v, ok := bytes.Cut(line, []byte(`"text":"`))
	if ok {
		v, _, ok = bytes.Cut(v, []byte(`"`))
	}
	if !ok {
		return 0, fmt.Errorf("not a timestamp chunk: %.100q", line)
	}
	return strconv.ParseInt(string(v), 10, 64)
}

// openStream sends one SendStreamingMessage "go" with message id msgID to
// rpcURL on a connection of its own and returns the SSE answer once its
// head says it is one; closeConn ends the connection.
func openStream(rpcURL, msgID string) (sr *sseReader, closeConn func(), err error) {
	req, addr, err := rpcRequest(rpcURL, "SendStreamingMessage",
		fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":"go"}]}}`, msgID+"-"+runID), true)
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
	if resp.Status != 200 || !bytes.HasPrefix([]byte(resp.ContentType), []byte("text/event-stream")) {
		c.Close()
		return nil, nil, fmt.Errorf("HTTP %d %s", resp.Status, resp.ContentType)
	}
	return newSSEReader(c, &resp), func() { c.Close() }, nil
}

// readA2A sends one SendStreamingMessage to rpcURL (whose upstream is an
// NDJSON stream of timestamps) and reads the SSE answer: the Task first,
// then one artifact update per chunk, then the completed status, then the
// end of the stream. It returns the number of chunks.
func readA2A(rpcURL string, seq int, onChunk chunkFunc) (int, error) {
	sr, closeConn, err := openStream(rpcURL, fmt.Sprintf("s-%d", seq))
	if err != nil {
		return 0, err
	}
	defer closeConn()
	n, frames := 0, 0
	var last int64
	final := ""
	lastChunk := false
	for {
		data, err := sr.next()
		now := time.Now()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		f, err := decodeFrame(data)
		if err != nil {
			return n, err
		}
		frames++
		switch r := f.Result; {
		case r.Task != nil:
			if frames != 1 {
				return n, errors.New("task frame after the first")
			}
		case frames == 1:
			return n, fmt.Errorf("first frame is not the task: %.200s", data)
		case r.ArtifactUpdate != nil:
			if lastChunk {
				return n, errors.New("artifact update after lastChunk")
			}
			if r.ArtifactUpdate.LastChunk {
				// The end of the upstream stream is only known after its
				// last chunk, so the artifact is closed by an empty one.
				lastChunk = true
				if n == 0 || !r.ArtifactUpdate.Append || len(r.ArtifactUpdate.Artifact.Parts) != 1 || r.ArtifactUpdate.Artifact.Parts[0].Text != "" {
					return n, fmt.Errorf("closing chunk: %.200s", data)
				}
				continue
			}
			if len(r.ArtifactUpdate.Artifact.Parts) != 1 {
				return n, fmt.Errorf("artifact update with %d parts", len(r.ArtifactUpdate.Artifact.Parts))
			}
			if r.ArtifactUpdate.Append != (n > 0) {
				return n, fmt.Errorf("chunk %d has append=%v", n, r.ArtifactUpdate.Append)
			}
			ts, err := strconv.ParseInt(r.ArtifactUpdate.Artifact.Parts[0].Text, 10, 64)
			if err != nil || ts <= last {
				return n, fmt.Errorf("chunk %d: bad or out-of-order timestamp %q", n, r.ArtifactUpdate.Artifact.Parts[0].Text)
			}
			last = ts
			n++
			onChunk(ts, now)
		case r.StatusUpdate != nil:
			final = r.StatusUpdate.Status.State
		}
	}
	if final != "TASK_STATE_COMPLETED" || !lastChunk {
		return n, fmt.Errorf("stream ended in state %q (lastChunk seen: %v), want TASK_STATE_COMPLETED", final, lastChunk)
	}
	return n, nil
}

// cmdRelay measures how long an upstream chunk takes to reach the client:
// read from the upstream directly, then as SSE frames through the module,
// in alternating rounds. The difference is what the module adds.
func cmdRelay(args []string) error {
	fs := newFlags("relay")
	direct := fs.String("direct", "", "upstream NDJSON URL (its chunk count and pace must match the module's upstream)")
	a2a := fs.String("a2a", "", "module JSON-RPC URL whose upstream is that stream")
	proxy := fs.String("proxy", "", "optional: the same NDJSON stream through Caddy's reverse_proxy (the streaming ceiling)")
	chunks := fs.Int("chunks", 500, "chunks per stream (as the upstream URL says)")
	streams := fs.Int("streams", 4, "concurrent streams")
	dur := fs.Duration("d", 10*time.Second, "duration (all paths at once)")
	chat := fs.Bool("chat", false, "the upstream is a chat completions stream (POST, SSE), the openai upstream's model server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *direct == "" || *a2a == "" {
		return errors.New("-direct and -a2a are required")
	}
	readUp := readDirect
	if *chat {
		readUp = readDirectChat
	}
	paths := []*relayPath{
		{name: "upstream read directly", read: func(_ int, f chunkFunc) (int, error) { return readUp(*direct, f) }},
		{name: "through caddy-a2a (SSE)", read: func(seq int, f chunkFunc) (int, error) { return readA2A(*a2a, seq, f) }},
	}
	if *proxy != "" {
		paths = append(paths, &relayPath{name: "through Caddy reverse_proxy (NDJSON)", read: func(_ int, f chunkFunc) (int, error) { return readDirect(*proxy, f) }})
	}
	runRelayPaths(paths, *streams, *chunks, *dur)
	fmt.Printf("\n### Chunk relay latency: upstream write → client read, %d streams of %d chunks per path (paced by the upstream), all paths at once for %s\n\n",
		*streams, *chunks, *dur)
	added := []addedRow{{"**added by caddy-a2a**", paths[1], paths[0]}}
	if len(paths) > 2 {
		added = append(added, addedRow{"**added by reverse_proxy**", paths[2], paths[0]})
	}
	printRelayTable(paths, added)
	if failedPaths(paths) {
		return errors.New("relay: streams failed")
	}
	return nil
}

// cmdEvents measures how many events per second one stream carries: an
// upstream that writes its chunks as fast as it can, read directly and
// through the module, one stream at a time.
func cmdEvents(args []string) error {
	fs := newFlags("events")
	direct := fs.String("direct", "", "upstream NDJSON URL of a burst stream")
	a2a := fs.String("a2a", "", "module JSON-RPC URL whose upstream is that stream")
	proxy := fs.String("proxy", "", "optional: the same NDJSON stream through Caddy's reverse_proxy")
	chunks := fs.Int("chunks", 5000, "chunks per stream (as the upstream URL says)")
	dur := fs.Duration("d", 5*time.Second, "duration per path")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *direct == "" || *a2a == "" {
		return errors.New("-direct and -a2a are required")
	}
	type result struct {
		name    string
		events  int
		streams int
		elapsed time.Duration
		err     error
	}
	run := func(name string, read func(seq int) (int, error)) result {
		r := result{name: name}
		start := time.Now()
		for seq := 1; time.Since(start) < *dur; seq++ {
			n, err := read(seq)
			if err == nil && n != *chunks {
				err = fmt.Errorf("%d chunks, want %d", n, *chunks)
			}
			if err != nil {
				r.err = err
				break
			}
			r.events += n
			r.streams++
		}
		r.elapsed = time.Since(start)
		logf("events %-24s %d events in %d streams, %.0f/s %v", name, r.events, r.streams, float64(r.events)/r.elapsed.Seconds(), r.err)
		return r
	}
	nop := func(int64, time.Time) {}
	rs := []result{
		run("upstream read directly", func(int) (int, error) { return readDirect(*direct, nop) }),
		run("through caddy-a2a (SSE)", func(seq int) (int, error) { return readA2A(*a2a, 1<<30+seq, nop) }),
	}
	if *proxy != "" {
		rs = append(rs, run("through Caddy reverse_proxy (NDJSON)", func(int) (int, error) { return readDirect(*proxy, nop) }))
	}
	fmt.Printf("\n### Events per second through one stream (%d-chunk streams, one at a time, %s per path)\n\n", *chunks, *dur)
	fmt.Println("| path | events | streams | events/s | errors |")
	fmt.Println("|---|---:|---:|---:|---|")
	var failed bool
	for _, r := range rs {
		errs := "0"
		if r.err != nil {
			errs = fmt.Sprintf("**FAIL**: %.120v", r.err)
			failed = true
		}
		fmt.Printf("| %s | %d | %d | %.0f | %s |\n", r.name, r.events, r.streams, float64(r.events)/r.elapsed.Seconds(), errs)
	}
	fmt.Println()
	if failed {
		return errors.New("events: streams failed")
	}
	return nil
}

func lastOf(s []int64) int64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

func fmtSigned(d time.Duration) string {
	if d == 0 {
		return "0 µs"
	}
	if d < 0 {
		return "−" + fmtDur(-d)
	}
	return "+" + fmtDur(d)
}
