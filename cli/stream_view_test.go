package cli

import (
	"context"
	"net/http"
	"testing"
)

// tokenStream is a streamed answer as a model upstream makes it: one
// chunk per token (a CRLF cut between two of them), the empty last
// chunk, then a second artifact with a file in it.
var tokenStream = []string{
	`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}`,
	`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m1","role":"ROLE_AGENT","parts":[{"text":"thinking"}]}}}}`,
	`{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"text":"HELLO"}]}}}`,
	`{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"text":" THROUGH\r"}]},"append":true}}`,
	`{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"text":"\n CADDY"}]},"append":true}}`,
	`{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"text":""}]},"append":true,"lastChunk":true}}`,
	`{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a2","name":"notes","parts":[{"text":"see"},{"url":"https://x/f","filename":"f.txt","mediaType":"text/plain"},{"text":"end"}]},"lastChunk":true}}`,
	`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`,
}

func streamSend(a *fakeAgent, so SendOptions) func(context.Context, *Options) int {
	return func(ctx context.Context, o *Options) int { return Send(ctx, o, a.URL, "hi", so) }
}

// TestStreamText: by default a stream prints the text as it arrives,
// each token where the last left off, and the task, its status changes
// and a second artifact's name each on a line of their own.
func TestStreamText(t *testing.T) {
	a := newFakeAgent(t, fakeCard("A", "d", "S"), map[string]http.HandlerFunc{"SendStreamingMessage": sseAnswer(tokenStream...)})
	runCommand(t, nil, streamSend(a, SendOptions{Stream: true})).want(t, 0, `task t1 (context c1): submitted
status: working: thinking
HELLO THROUGH
 CADDY
[notes]
see
[file f.txt (text/plain) at https://x/f]
end
status: completed
`, "")

	// A stream that ends within a line ends the line.
	a.answer("SendStreamingMessage", sseAnswer(tokenStream[:3]...))
	runCommand(t, nil, streamSend(a, SendOptions{Stream: true})).want(t, 1, `task t1 (context c1): submitted
status: working: thinking
HELLO
`, "task t1 is still working (the stream ended before the task did)\n")
}

// TestStreamEvents: --events prints each event on a line, an artifact's
// chunks named by the artifact, but not an empty last chunk.
func TestStreamEvents(t *testing.T) {
	a := newFakeAgent(t, fakeCard("A", "d", "S"), map[string]http.HandlerFunc{"SendStreamingMessage": sseAnswer(tokenStream...)})
	runCommand(t, nil, streamSend(a, SendOptions{Events: true})).want(t, 0, `task t1 (context c1): submitted
status: working: thinking
artifact a1: HELLO
artifact a1:  THROUGH\r
artifact a1: 
 CADDY
artifact notes: see
[file f.txt (text/plain) at https://x/f]
end
status: completed
`, "")
}

// TestSendJoinsText: a blocking answer's adjacent text parts are one
// text (a streamed answer kept a part per token); a data or file part
// is a line of its own.
func TestSendJoinsText(t *testing.T) {
	a := newFakeAgent(t, fakeCard("A", "d", "S"), map[string]http.HandlerFunc{"SendMessage": jsonAnswer(
		`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a1",` +
			`"parts":[{"text":"HELLO"},{"text":" THROUGH"},{"text":" CADDY"},{"data":{"n":1}},{"text":"after"},{"text":" all"}]}]}}`)})
	runCommand(t, nil, func(ctx context.Context, o *Options) int { return Send(ctx, o, a.URL, "hi", SendOptions{}) }).
		want(t, 0, "HELLO THROUGH CADDY\n{\"n\":1}\nafter all\n", "")
}
