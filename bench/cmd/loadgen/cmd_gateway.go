package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// readAgentStream sends one SendStreamingMessage to rpcURL, an A2A 1.0
// agent whose artifact is a paced stream of timestamps (bench/cmd/a2aagent
// /chunks/…) or the module in front of one, and reads the SSE answer: the
// Task first, then chunks artifact updates of one part each, all of one
// artifact of that task, append false then true, lastChunk on the last
// one only, then the completed status and the end of the stream. Status
// updates may come between (the module reports working). It returns the
// number of chunks.
func readAgentStream(rpcURL string, seq, chunks int, onChunk chunkFunc) (int, error) {
	sr, closeConn, err := openStream(rpcURL, fmt.Sprintf("g-%d", seq))
	if err != nil {
		return 0, err
	}
	defer closeConn()
	return readAgentFrames(sr, chunks, onChunk)
}

// readAgentFrames checks the frames of readAgentStream's answer.
func readAgentFrames(sr *sseReader, chunks int, onChunk chunkFunc) (int, error) {
	var (
		taskID, artifactID, final string
		n, frames                 int
		last                      int64
	)
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
		if final != "" {
			return n, fmt.Errorf("a frame after the final status: %.200s", data)
		}
		switch r := f.Result; {
		case frames == 1:
			if r.Task == nil || r.Task.ID == "" {
				return n, fmt.Errorf("first frame is not a task: %.200s", data)
			}
			taskID = r.Task.ID
		case r.Task != nil:
			return n, errors.New("task frame after the first")
		case r.ArtifactUpdate != nil:
			u := r.ArtifactUpdate
			switch {
			case u.TaskID != taskID:
				return n, fmt.Errorf("artifact update of task %q, want %q", u.TaskID, taskID)
			case n == chunks:
				return n, errors.New("artifact update after the last chunk")
			case u.Artifact.ArtifactID == "" || (n > 0 && u.Artifact.ArtifactID != artifactID):
				return n, fmt.Errorf("chunk %d of artifact %q, want one artifact throughout", n, u.Artifact.ArtifactID)
			case len(u.Artifact.Parts) != 1:
				return n, fmt.Errorf("artifact update with %d parts", len(u.Artifact.Parts))
			case u.Append != (n > 0):
				return n, fmt.Errorf("chunk %d has append=%v", n, u.Append)
			case u.LastChunk != (n == chunks-1):
				return n, fmt.Errorf("chunk %d of %d has lastChunk=%v", n, chunks, u.LastChunk)
			}
			artifactID = u.Artifact.ArtifactID
			ts, err := strconv.ParseInt(u.Artifact.Parts[0].Text, 10, 64)
			if err != nil || ts <= last {
				return n, fmt.Errorf("chunk %d: bad or out-of-order timestamp %q", n, u.Artifact.Parts[0].Text)
			}
			last = ts
			n++
			onChunk(ts, now)
		case r.StatusUpdate != nil:
			if r.StatusUpdate.TaskID != taskID {
				return n, fmt.Errorf("status update of task %q, want %q", r.StatusUpdate.TaskID, taskID)
			}
			switch s := r.StatusUpdate.Status.State; s {
			case "TASK_STATE_WORKING":
			case "TASK_STATE_COMPLETED":
				final = s
			default:
				return n, fmt.Errorf("status %q", s)
			}
		default:
			return n, fmt.Errorf("frame holds no event: %.200s", data)
		}
	}
	if final == "" {
		return n, errors.New("stream ended without the completed status")
	}
	return n, nil
}

// cmdGatewayRelay measures how long a chunk of an A2A agent's stream takes
// to reach the client: read from the agent directly, through the module's
// a2a upstream, and through Caddy's reverse_proxy, all at the same time.
// The module's cost as a gateway is its latency minus reverse_proxy's.
func cmdGatewayRelay(args []string) error {
	fs := newFlags("gwrelay")
	direct := fs.String("direct", "", "the agent's JSON-RPC URL (a paced chunk stream)")
	gateway := fs.String("gateway", "", "the module's JSON-RPC URL, with that agent as its a2a upstream")
	proxy := fs.String("proxy", "", "the agent's JSON-RPC URL through Caddy's reverse_proxy")
	chunks := fs.Int("chunks", 500, "chunks per stream (as the agent's path says)")
	streams := fs.Int("streams", 4, "concurrent streams per path")
	dur := fs.Duration("d", 10*time.Second, "duration (all paths at once)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *direct == "" || *gateway == "" || *proxy == "" {
		return errors.New("-direct, -gateway and -proxy are required")
	}
	reader := func(u string) func(int, chunkFunc) (int, error) {
		return func(seq int, f chunkFunc) (int, error) { return readAgentStream(u, seq, *chunks, f) }
	}
	d := &relayPath{name: "agent read directly", read: reader(*direct)}
	g := &relayPath{name: "through caddy-a2a (upstream a2a)", read: reader(*gateway)}
	p := &relayPath{name: "through Caddy reverse_proxy", read: reader(*proxy)}
	paths := []*relayPath{d, g, p}
	runRelayPaths(paths, *streams, *chunks, *dur)
	fmt.Printf("\n### Gateway chunk latency: agent write → client read, %d streams of %d chunks per path (paced by the agent), all paths at once for %s\n\n",
		*streams, *chunks, *dur)
	printRelayTable(paths, []addedRow{
		{"**added by caddy-a2a**", g, d},
		{"**added by reverse_proxy**", p, d},
		{"**caddy-a2a − reverse_proxy**", g, p},
	})
	if failedPaths(paths) {
		return errors.New("gwrelay: streams failed")
	}
	return nil
}
