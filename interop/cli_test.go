package interop

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/cli"
)

// cliIDs stands for the random ids in a command's output.
var cliIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// cliResult is one client command's exit code and output, ids replaced.
type cliResult struct {
	code     int
	out, err string
	rawErr   string // stderr with the ids, to continue a task
}

func runCLICommand(t *testing.T, ctx context.Context, version string, run func(context.Context, *cli.Options) int) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(ctx, &cli.Options{Version: version, Out: &out, Err: &errOut})
	return cliResult{code, cliIDs.ReplaceAllString(out.String(), "ID"), cliIDs.ReplaceAllString(errOut.String(), "ID"), errOut.String()}
}

func (r cliResult) want(t *testing.T, what string, code int, out, errOut string) {
	t.Helper()
	if r.code != code || r.out != out || r.err != errOut {
		t.Errorf("%s: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s", what, r.code, r.out, r.err, code, out, errOut)
	}
}

// cliPeer is a server the command line is pointed at, with the versions
// it speaks.
type cliPeer struct {
	name, url string
	versions  []string
}

// TestCLIAgainstPeers: `caddy a2a card` and `caddy a2a send` against real
// a2a-go v2 and @a2a-js/sdk servers (each version they serve) and against
// the module fronting one of them: the same script, the same answers and
// exit codes.
func TestCLIAgainstPeers(t *testing.T) {
	v2 := startV2HybridAgent(t, localListener(t))
	v2only := startV2Agent(t, localListener(t))
	js := startJSHybridAgent(t, 0)
	jsOnly := startJSAgent(t, 0)
	restoreBase(t)
	loadGateway(t, v2only)
	peers := []cliPeer{
		{v2.Name, v2.URL, []string{"1.0", "0.3"}},
		{v2only.Name, v2only.URL, []string{"1.0"}},
		{js.Name, js.URL, []string{"1.0", "0.3"}},
		{jsOnly.Name, jsOnly.URL, []string{"1.0"}},
		{"caddy-a2a gateway", gatewayURL, []string{"1.0", "0.3"}},
	}
	for _, p := range peers {
		t.Run(p.name, func(t *testing.T) {
			ctx := testCtx(t)
			r := runCLICommand(t, ctx, "", func(ctx context.Context, o *cli.Options) int { return cli.Card(ctx, o, p.url) })
			if r.code != 0 || !strings.HasSuffix(r.out, "Problems:     none\n") {
				t.Errorf("card: exit %d:\n%s%s", r.code, r.out, r.err)
			}
			// Every interface answered the probe; a2a-go's 0.3 compat server
			// sends its JSON-RPC answers as text/plain, which the listing notes.
			for _, l := range strings.Split(r.out, "\n") {
				if strings.HasPrefix(l, "  JSONRPC ") && !strings.HasSuffix(l, "  answers") &&
					!(p.name == "a2a-go-v2-hybrid" && strings.HasSuffix(l, `/v03  answers (JSON sent as "text/plain")`)) {
					t.Errorf("card: interface %q", l)
				}
			}
			for _, v := range p.versions {
				t.Run(v, func(t *testing.T) {
					cliScript(t, testCtx(t), p, v)
				})
			}
		})
	}
}

func cliScript(t *testing.T, ctx context.Context, p cliPeer, v string) {
	send := func(text string, so cli.SendOptions) cliResult {
		so.Continue = "caddy a2a send " + p.url
		return runCLICommand(t, ctx, v, func(ctx context.Context, o *cli.Options) int { return cli.Send(ctx, o, p.url, text, so) })
	}
	send("echo hi", cli.SendOptions{}).want(t, "echo", 0, "echo: hi\n", "")
	send("msg hi", cli.SendOptions{}).want(t, "msg", 0, "msg: hi\n", "")
	send("stream 3", cli.SendOptions{Stream: true}).want(t, "stream", 0, `task ID (context ID): submitted
status: working
chunk 1 chunk 2 chunk 3 
status: completed
`, "")
	send("stream 3", cli.SendOptions{Events: true}).want(t, "stream, events", 0, `task ID (context ID): submitted
status: working
artifact ID: chunk 1 
artifact ID: chunk 2 
artifact ID: chunk 3 
status: completed
`, "")
	r := send("ask", cli.SendOptions{})
	r.want(t, "ask", 2, peerQuestion+"\n", "task ID is input-required; continue it with: caddy a2a send "+p.url+" --task ID <text>\n")
	if id := cliIDs.FindString(r.rawErr); id != "" {
		send("Ann", cli.SendOptions{TaskID: id}).want(t, "ask, continued", 0, "hello Ann\n", "")
	}
	send("fail", cli.SendOptions{}).want(t, "fail", 1, peerBoom+"\n", "task ID failed: "+peerBoom+"\n")
	// Each server words its error; the code is the spec's.
	if r := send("echo again", cli.SendOptions{TaskID: "no-such-task"}); r.code != 1 || !strings.HasPrefix(r.err, "error -32001: ") || r.out != "" {
		t.Errorf("unknown task: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}

	// A slow task, canceled from another command while it streams (its
	// id read from the stream's first line: ListTasks is not portable,
	// a2a-go asks for an authenticated caller, the others list nothing
	// for an anonymous one).
	lines := make(chan string, 16)
	done := make(chan cliResult, 1)
	go func() {
		var errOut bytes.Buffer
		so := cli.SendOptions{Stream: true, Continue: "caddy a2a send " + p.url}
		code := cli.Send(ctx, &cli.Options{Version: v, Out: lineWriter(lines), Err: &errOut}, p.url, "slow", so)
		done <- cliResult{code: code, err: cliIDs.ReplaceAllString(errOut.String(), "ID")}
	}()
	var first string
	select {
	case first = <-lines:
	case <-ctx.Done():
		t.Fatal("the slow stream sent nothing")
	}
	id := cliIDs.FindString(first)
	if id == "" {
		t.Fatalf("the stream's first line: %q", first)
	}
	r = runCLICommand(t, ctx, v, func(ctx context.Context, o *cli.Options) int { return cli.Cancel(ctx, o, p.url, id) })
	if !regexp.MustCompile(`^ID  canceled        \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  context ID\n$`).MatchString(r.out) || r.code != 0 || r.err != "" {
		t.Errorf("cancel: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	select {
	case r := <-done:
		if r.code != 1 || r.err != "task ID canceled\n" {
			t.Errorf("the canceled stream: exit %d, stderr %q", r.code, r.err)
		}
	case <-ctx.Done():
		t.Fatal("the stream did not end with the cancel")
	}
}

// lineWriter sends each line written to it on ch.
type lineWriter chan string

func (w lineWriter) Write(b []byte) (int, error) {
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			w <- l
		}
	}
	return len(b), nil
}
