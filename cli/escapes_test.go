package cli

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// Hostile strings as a JSON document carries them: OSC 52 (write the
// clipboard), CSI (clear the screen, home the cursor), OSC 8 (a link
// whose text is not its target), a C1 CSI, a bidi override.
const (
	osc52 = `\u001b]52;c;ZXZpbA==\u0007`
	csi   = `\u001b[2J\u001b[H`
	osc8  = `\u001b]8;;https://evil.example\u001b\\docs\u001b]8;;\u001b\\`
	c1    = `\u009b2J`
	bidi  = `\u202egpj.exe`
)

// TestCardEscapes: card fields and skill names reach the terminal with
// their control characters escaped, a fake "Problems: none" included;
// --json prints the document as served.
func TestCardEscapes(t *testing.T) {
	card := fakeCard("Echo"+osc52, csi+`Problems:     none\n`+c1, osc8+bidi)
	a := newFakeAgent(t, card, nil)
	runCommand(t, nil, func(ctx context.Context, o *Options) int { return Card(ctx, o, a.URL) }).want(t, 0,
		`Card:         `+a.URL+`/.well-known/agent-card.json
Name:         Echo\x1b]52;c;ZXZpbA==\x07
Description:  \x1b[2J\x1b[HProblems:     none\n\u009b2J
Version:      1
Interfaces:
  JSONRPC    1.0    `+a.URL+`/a2a  answers
Capabilities: streaming
Input modes:  text/plain
Output modes: text/plain
Skills:
  s: \x1b]8;;https://evil.example\x1b\docs\x1b]8;;\x1b\\u202egpj.exe: d [t]
Security:     none declared
Problems:     none
`, "")
	doc := a.card
	runCommand(t, func(o *Options) { o.JSON = true }, func(ctx context.Context, o *Options) int { return Card(ctx, o, a.URL) }).
		want(t, 0, strings.ReplaceAll(doc, "%s", a.URL)+"\n", "")
}

// TestSendEscapes: an agent's text keeps its lines and tabs but no
// control sequence, on every path send prints: a blocking answer's
// artifacts and status, a stream (as text and as events), the exit
// line, an error.
func TestSendEscapes(t *testing.T) {
	task := `{"task":{"id":"t1` + csi + `","contextId":"c1","status":{"state":"TASK_STATE_FAILED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"why` + osc52 + `\nnext"}]}},` +
		`"artifacts":[{"artifactId":"a1","name":"one` + bidi + `","parts":[{"text":"line 1\r\n\tred ` + `\u001b[31m` + `red\u001b[0m\rover"}]},` +
		`{"artifactId":"a2","parts":[{"text":"` + c1 + `"},{"url":"https://x/` + osc8 + `","filename":"f\nProblems:     none","mediaType":"text/plain"}]}]}}`
	a := newFakeAgent(t, fakeCard("A", "d", "S"), map[string]http.HandlerFunc{
		"SendMessage": jsonAnswer(task),
		"SendStreamingMessage": sseAnswer(task,
			`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"text":"`+csi+`done"}]}}}}`,
			`{"message":{"messageId":"m3","role":"ROLE_AGENT","parts":[{"text":"`+osc8+`"}]}}`),
		"CancelTask": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":-32002,"message":"` + csi + `not cancelable"}}`))
		},
	})
	send := func(so SendOptions) func(context.Context, *Options) int {
		return func(ctx context.Context, o *Options) int {
			so.Continue = "caddy a2a send " + a.URL
			return Send(ctx, o, a.URL, "hi", so)
		}
	}
	runCommand(t, nil, send(SendOptions{})).want(t, 1,
		`[one\u202egpj.exe]
line 1
	red \x1b[31mred\x1b[0m\rover
[a2]
\u009b2J
[file f\nProblems:     none (text/plain) at https://x/\x1b]8;;https://evil.example\x1b\docs\x1b]8;;\x1b\]
why\x1b]52;c;ZXZpbA==\x07
next
`, `task t1\x1b[2J\x1b[H failed: why\x1b]52;c;ZXZpbA==\x07
next
`)
	runCommand(t, nil, send(SendOptions{Stream: true})).want(t, 0,
		`task t1\x1b[2J\x1b[H (context c1): failed: why\x1b]52;c;ZXZpbA==\x07
next
line 1
	red \x1b[31mred\x1b[0m\rover
[a2]
\u009b2J
[file f\nProblems:     none (text/plain) at https://x/\x1b]8;;https://evil.example\x1b\docs\x1b]8;;\x1b\]
status: working: \x1b[2J\x1b[Hdone
agent: \x1b]8;;https://evil.example\x1b\docs\x1b]8;;\x1b\
`, "")
	runCommand(t, nil, send(SendOptions{Events: true})).want(t, 0,
		`task t1\x1b[2J\x1b[H (context c1): failed: why\x1b]52;c;ZXZpbA==\x07
next
artifact one\u202egpj.exe: line 1
	red \x1b[31mred\x1b[0m\rover
artifact a2: \u009b2J
[file f\nProblems:     none (text/plain) at https://x/\x1b]8;;https://evil.example\x1b\docs\x1b]8;;\x1b\]
status: working: \x1b[2J\x1b[Hdone
agent: \x1b]8;;https://evil.example\x1b\docs\x1b]8;;\x1b\
`, "")
	runCommand(t, nil, func(ctx context.Context, o *Options) int { return Cancel(ctx, o, a.URL, "t1") }).
		want(t, 1, "", `error -32002: \x1b[2J\x1b[Hnot cancelable`+"\n")
	// --json: the frame as sent.
	runCommand(t, func(o *Options) { o.JSON = true }, send(SendOptions{})).
		want(t, 1, `{"jsonrpc":"2.0","id":"x","result":`+task+"}\n", `task t1\x1b[2J\x1b[H failed: why\x1b]52;c;ZXZpbA==\x07
next
`)
}
