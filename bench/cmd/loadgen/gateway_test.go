package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// frameOf is one SSE frame of a 1.0 stream with result as its result.
func frameOf(result string) string {
	return `data: {"jsonrpc":"2.0","id":1,"result":` + result + "}\n\n"
}

func taskFrame(id string) string {
	return frameOf(`{"task":{"id":"` + id + `","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`)
}

func chunkFrame(task, artifact, text string, appendTo, last bool) string {
	return frameOf(fmt.Sprintf(`{"artifactUpdate":{"taskId":%q,"contextId":"c","artifact":{"artifactId":%q,"parts":[{"text":%q}]},"append":%v,"lastChunk":%v}}`,
		task, artifact, text, appendTo, last))
}

func statusFrame(task, state string) string {
	return frameOf(`{"statusUpdate":{"taskId":"` + task + `","contextId":"c","status":{"state":"` + state + `"}}}`)
}

// TestReadAgentFrames runs the stream check on what the agent and the
// module send (which must pass) and on streams that are wrong in one way
// each (which must not).
func TestReadAgentFrames(t *testing.T) {
	ok3 := []string{taskFrame("t"), chunkFrame("t", "a", "10", false, false), chunkFrame("t", "a", "20", true, false),
		chunkFrame("t", "a", "30", true, true), statusFrame("t", "TASK_STATE_COMPLETED")}
	with := func(i int, f string) []string {
		s := append([]string(nil), ok3...)
		s[i] = f
		return s
	}
	// The module numbers its frames, reports working, and leaves false
	// booleans out.
	module := []string{"id: 1\n" + taskFrame("m"), "id: 2\n" + statusFrame("m", "TASK_STATE_WORKING"),
		"id: 3\n" + frameOf(`{"artifactUpdate":{"taskId":"m","artifact":{"artifactId":"x","parts":[{"text":"5"}]}}}`),
		"id: 4\n" + frameOf(`{"artifactUpdate":{"taskId":"m","artifact":{"artifactId":"x","parts":[{"text":"6"}]},"append":true}}`),
		"id: 5\n" + frameOf(`{"artifactUpdate":{"taskId":"m","artifact":{"artifactId":"x","parts":[{"text":"7"}]},"append":true,"lastChunk":true}}`),
		"id: 6\n" + statusFrame("m", "TASK_STATE_COMPLETED")}
	for _, tc := range []struct {
		name    string
		frames  []string
		wantErr string // "" if the stream must pass
	}{
		{"agent", ok3, ""},
		{"module", module, ""},
		{"first not a task", append([]string{statusFrame("t", "TASK_STATE_WORKING")}, ok3...), "first frame is not a task"},
		{"second task", append(append([]string(nil), ok3[:2]...), append([]string{taskFrame("t")}, ok3[2:]...)...), "task frame after the first"},
		{"append on the first", with(1, chunkFrame("t", "a", "10", true, false)), "chunk 0 has append=true"},
		{"no append later", with(2, chunkFrame("t", "a", "20", false, false)), "chunk 1 has append=false"},
		{"lastChunk early", with(2, chunkFrame("t", "a", "20", true, true)), "chunk 1 of 3 has lastChunk=true"},
		{"lastChunk missing", with(3, chunkFrame("t", "a", "30", true, false)), "chunk 2 of 3 has lastChunk=false"},
		{"out of order", with(2, chunkFrame("t", "a", "5", true, false)), "out-of-order timestamp"},
		{"not a timestamp", with(2, chunkFrame("t", "a", "ok", true, false)), "bad or out-of-order timestamp"},
		{"other task", with(2, chunkFrame("u", "a", "20", true, false)), `artifact update of task "u"`},
		{"other artifact", with(2, chunkFrame("t", "b", "20", true, false)), "want one artifact throughout"},
		{"no artifact id", with(1, chunkFrame("t", "", "10", false, false)), "want one artifact throughout"},
		{"failed", with(4, statusFrame("t", "TASK_STATE_FAILED")), `status "TASK_STATE_FAILED"`},
		{"status of another task", with(4, statusFrame("u", "TASK_STATE_COMPLETED")), `status update of task "u"`},
		{"no final status", ok3[:4], "without the completed status"},
		{"frame after the end", append(append([]string(nil), ok3...), statusFrame("t", "TASK_STATE_WORKING")), "after the final status"},
		{"a fourth chunk", append(append([]string(nil), ok3[:4]...), chunkFrame("t", "a", "40", true, false), ok3[4]), "after the last chunk"},
		{"error frame", with(2, `data: {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`+"\n\n"), "JSON-RPC error -32603 boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sr := &sseReader{br: bufio.NewReader(strings.NewReader(strings.Join(tc.frames, "")))}
			var got []int64
			n, err := readAgentFrames(sr, 3, func(sent int64, _ time.Time) { got = append(got, sent) })
			if tc.wantErr == "" {
				if err != nil || n != 3 || len(got) != 3 {
					t.Fatalf("n %d %v, err %v", n, got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}

// TestReadAgentStream reads a stream over a real connection: the request
// must be a 1.0 SendStreamingMessage asking for SSE.
func TestReadAgentStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string
			Params struct {
				Message struct{ MessageID, Role string }
			}
		}
		err := json.NewDecoder(r.Body).Decode(&req)
		if err != nil || r.URL.Path != "/rpc" || req.Method != "SendStreamingMessage" || req.Params.Message.MessageID != "g-9-"+runID ||
			req.Params.Message.Role != "ROLE_USER" || r.Header.Get("A2A-Version") != "1.0" || r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, fmt.Sprint(req, err, r.Header), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, taskFrame("t"))
		for i := range 2 {
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, chunkFrame("t", "a", fmt.Sprint(time.Now().UnixNano()), i > 0, i == 1))
		}
		_, _ = io.WriteString(w, statusFrame("t", "TASK_STATE_COMPLETED"))
	}))
	defer srv.Close()
	var lat []time.Duration
	n, err := readAgentStream(srv.URL+"/rpc", 9, 2, func(sent int64, read time.Time) { lat = append(lat, time.Duration(read.UnixNano()-sent)) })
	if err != nil || n != 2 || len(lat) != 2 {
		t.Fatalf("n %d, err %v", n, err)
	}
	for _, l := range lat {
		if l < 0 || l > time.Second {
			t.Fatalf("latency %v", l)
		}
	}
	if _, err := readAgentStream(srv.URL+"/other", 9, 2, func(int64, time.Time) {}); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("a refused stream read as %v", err)
	}
}
