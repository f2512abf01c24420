package protocol

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// checkGolden compares got with testdata/golden/<name> (the exact bytes
// plus a trailing newline) after checking it is valid JSON.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	if !json.Valid(got) {
		t.Fatalf("%s: invalid JSON: %s", name, got)
	}
	if bytes.ContainsAny(got, "\r\n") {
		t.Fatalf("%s: output spans lines: %s", name, got)
	}
	checkGoldenText(t, name, append(got, '\n'))
}

func checkGoldenText(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test -update to create it)", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n got %s\nwant %s", name, got, want)
	}
}

func codecDir(c Codec) string {
	if c.Version() == V03 {
		return "v03"
	}
	return "v10"
}

func TestGoldenEncodings(t *testing.T) {
	task := fixtureTask()
	agent := fixtureAgentMessage()
	user := fixtureUserMessage()
	working, final := fixtureStatusWorking(), fixtureStatusFinal()
	first, last := fixtureArtifactFirst(), fixtureArtifactLast()
	bare := Task{ID: "task-2", Status: TaskStatus{State: StateSubmitted}}
	for _, c := range []Codec{codecV03, codecV10} {
		dir := codecDir(c) + "/"
		cases := []struct {
			name string
			got  []byte
		}{
			{"task.json", c.AppendTask(nil, &task)},
			{"task_minimal.json", c.AppendTask(nil, &bare)},
			{"send_result_task.json", c.AppendSendResult(nil, &Event{Task: &task})},
			{"send_result_message.json", c.AppendSendResult(nil, &Event{Message: &agent})},
			{"stream_message_user.json", c.AppendStreamResult(nil, &Event{Message: &user})},
			{"stream_status_working.json", c.AppendStreamResult(nil, &Event{Status: &working})},
			{"stream_status_final.json", c.AppendStreamResult(nil, &Event{Status: &final})},
			{"stream_artifact_first.json", c.AppendStreamResult(nil, &Event{Artifact: &first})},
			{"stream_artifact_last.json", c.AppendStreamResult(nil, &Event{Artifact: &last})},
			{"list_empty.json", c.AppendListTasks(nil, &ListTasksResult{PageSize: 50})},
			{"list_full.json", c.AppendListTasks(nil, &ListTasksResult{Tasks: []Task{bare, {ID: "task-3", ContextID: "ctx-3",
				Status: TaskStatus{State: StateInputRequired, Timestamp: fixtureTime}}}, NextPageToken: "next-tok", PageSize: 2, TotalSize: 7})},
		}
		for _, tc := range cases {
			checkGolden(t, dir+tc.name, tc.got)
		}
		var errs []byte
		for _, fe := range fixtureErrors() {
			out := c.AppendError(nil, fe.err)
			if !json.Valid(out) {
				t.Fatalf("%s: invalid JSON %s", fe.name, out)
			}
			errs = append(errs, fe.name+"\t"...)
			errs = append(append(errs, out...), '\n')
		}
		checkGoldenText(t, dir+"errors.txt", errs)
	}
}

func TestGoldenCards(t *testing.T) {
	card := fixtureCard()
	for _, tc := range []struct {
		name string
		v    CardVariant
	}{{"card_hybrid.json", CardHybrid}, {"card_v03.json", CardV03}, {"card_v10.json", CardV10}} {
		checkGolden(t, "card/"+tc.name, RenderCard(&card, tc.v))
	}
	secured := fixtureSecuredCard()
	if err := ValidateCard(&secured); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		v    CardVariant
	}{{"card_security_hybrid.json", CardHybrid}, {"card_security_v03.json", CardV03}, {"card_security_v10.json", CardV10}} {
		checkGolden(t, "card/"+tc.name, RenderCard(&secured, tc.v))
	}
	// The smallest valid card, as a config with no optional member gives.
	min := AgentCard{Name: "n", Description: "d", Version: "1",
		Interfaces: []Interface{{URL: "http://127.0.0.1:8080/a2a", Version: V03}},
		Skills:     []Skill{{ID: "s", Name: "s", Description: "d", Tags: []string{"t"}}}}
	checkGolden(t, "card/card_minimal_hybrid.json", RenderCard(&min, CardHybrid))
	checkGolden(t, "card/card_minimal_v03.json", RenderCard(&min, CardV03))
}
