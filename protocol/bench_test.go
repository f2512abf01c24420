package protocol

import (
	"encoding/json"
	"testing"
)

// Micro-benchmarks of the hot paths: run with -benchmem to see
// allocations. A typical request is a one-text-part send; a typical answer
// a completed task with the user message in history and one artifact.

var benchBodyV10 = []byte(`{"jsonrpc":"2.0","id":"req-1","method":"SendMessage","params":{"message":{"messageId":"9f1c2a3b-0000-4000-8000-000000000001","role":"ROLE_USER","parts":[{"text":"Hello, agent! Please summarise the attached text."}],"metadata":{"client":"bench"}},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":10}}}`)

var benchParamsV03 = json.RawMessage(`{"message":{"kind":"message","messageId":"9f1c2a3b-0000-4000-8000-000000000001","role":"user","parts":[{"kind":"text","text":"Hello, agent! Please summarise the attached text."}],"metadata":{"client":"bench"}},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":10,"blocking":true}}`)

func benchTask() *Task {
	user := Message{ID: "9f1c2a3b-0000-4000-8000-000000000001", ContextID: "ctx-1", TaskID: "task-1", Role: RoleUser,
		Parts: []Part{{Kind: PartText, Text: "Hello, agent! Please summarise the attached text."}}}
	return &Task{ID: "task-1", ContextID: "ctx-1", Status: TaskStatus{State: StateCompleted, Timestamp: fixtureTime},
		History:   []Message{user},
		Artifacts: []Artifact{{ID: "art-1", Parts: []Part{{Kind: PartText, Text: "Here is the summary you asked for: it is short."}}}}}
}

func BenchmarkDecodeRequest(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBodyV10)))
	for i := 0; i < b.N; i++ {
		if _, e := decodeRequest(benchBodyV10); e != nil {
			b.Fatal(e)
		}
	}
}

func BenchmarkDecodeSendV03(b *testing.B) {
	benchDecodeSend(b, codecV03, benchParamsV03)
}

func BenchmarkDecodeSendV10(b *testing.B) {
	req, _ := decodeRequest(benchBodyV10)
	benchDecodeSend(b, codecV10, req.Params)
}

func benchDecodeSend(b *testing.B, c Codec, params json.RawMessage) {
	b.ReportAllocs()
	b.SetBytes(int64(len(params)))
	for i := 0; i < b.N; i++ {
		if _, err := c.DecodeSend(params); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendSendResultV03(b *testing.B) { benchAppendSend(b, codecV03) }
func BenchmarkAppendSendResultV10(b *testing.B) { benchAppendSend(b, codecV10) }

func benchAppendSend(b *testing.B, c Codec) {
	ev := &Event{Task: benchTask()}
	id := []byte(`"req-1"`)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendResultHead(buf[:0], id)
		buf = c.AppendSendResult(buf, ev)
		buf = AppendResponseEnd(buf)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkAppendStreamStatusV10(b *testing.B) {
	ev := &Event{Status: &StatusUpdate{TaskID: "task-1", ContextID: "ctx-1", Status: TaskStatus{State: StateWorking, Timestamp: fixtureTime}}}
	buf := make([]byte, 0, 1024)
	frame := make([]byte, 0, 1024)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendResultHead(buf[:0], []byte(`1`))
		buf = codecV10.AppendStreamResult(buf, ev)
		buf = AppendResponseEnd(buf)
		frame = AppendSSEEvent(frame[:0], "42", buf)
	}
}

// BenchmarkEncodingJSONBaseline is the same send result marshalled with
// encoding/json from an equivalent struct, for comparison only.
func BenchmarkEncodingJSONBaseline(b *testing.B) {
	type part struct {
		Text string `json:"text"`
	}
	type msg struct {
		MessageID string `json:"messageId"`
		ContextID string `json:"contextId"`
		TaskID    string `json:"taskId"`
		Role      string `json:"role"`
		Parts     []part `json:"parts"`
	}
	type art struct {
		ArtifactID string `json:"artifactId"`
		Parts      []part `json:"parts"`
	}
	type status struct {
		State     string `json:"state"`
		Timestamp string `json:"timestamp"`
	}
	type task struct {
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    status `json:"status"`
		Artifacts []art  `json:"artifacts"`
		History   []msg  `json:"history"`
	}
	type resp struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Result  struct {
			Task task `json:"task"`
		} `json:"result"`
	}
	var r resp
	r.JSONRPC, r.ID = "2.0", "req-1"
	r.Result.Task = task{ID: "task-1", ContextID: "ctx-1", Status: status{"TASK_STATE_COMPLETED", "2026-03-12T10:30:00.123Z"},
		Artifacts: []art{{"art-1", []part{{"Here is the summary you asked for: it is short."}}}},
		History:   []msg{{"9f1c2a3b-0000-4000-8000-000000000001", "ctx-1", "task-1", "ROLE_USER", []part{{"Hello, agent! Please summarise the attached text."}}}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := json.Marshal(&r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderCard(b *testing.B) {
	c := fixtureCard()
	for _, v := range []struct {
		name string
		v    CardVariant
	}{{"hybrid", CardHybrid}, {"v03", CardV03}, {"v10", CardV10}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = RenderCard(&c, v.v)
			}
		})
	}
}
