package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/cli"
)

// cliRun is one client command's exit code, stdout and stderr.
type cliRun struct {
	code     int
	out, err string
}

// runCLI runs a client command of `caddy a2a` against the test server,
// with the options set sets (headers, version, JSON).
func runCLI(t *testing.T, set func(*cli.Options), run func(context.Context, *cli.Options) int) cliRun {
	t.Helper()
	var out, errOut bytes.Buffer
	o := &cli.Options{Out: &out, Err: &errOut}
	if set != nil {
		set(o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code := run(ctx, o)
	return cliRun{code, out.String(), errOut.String()}
}

func (r cliRun) want(t *testing.T, code int, out, errOut string) {
	t.Helper()
	if r.code != code || r.out != out || r.err != errOut {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.out, r.err, code, out, errOut)
	}
}

func version(v string) func(*cli.Options) { return func(o *cli.Options) { o.Version = v } }

func send(url, text string, so cli.SendOptions) func(context.Context, *cli.Options) int {
	so.Continue = "caddy a2a send " + url
	return func(ctx context.Context, o *cli.Options) int { return cli.Send(ctx, o, url, text, so) }
}

// ids stands for the random ids of a streamed answer, so that the lines
// can be compared whole.
var ids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// TestCLICard: `caddy a2a card` prints our card and finds nothing wrong;
// a base URL, the RPC URL and the card's own URL all find it.
func TestCLICard(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	want := `Card:         http://127.0.0.1:9080/.well-known/agent-card.json
Name:         Test agent
Description:  An agent under test.
Version:      1.0.0
Interfaces:
  JSONRPC    1.0    http://127.0.0.1:9080/a2a  answers
  JSONRPC    0.3    http://127.0.0.1:9080/a2a  answers
Capabilities: streaming
Input modes:  text/plain, application/json
Output modes: text/plain, application/json
Skills:
  echo: Echo: Echoes. [test]
Security:     none declared
Problems:     none
`
	for _, u := range []string{base, base + "/", base + "/a2a", base + "/.well-known/agent-card.json"} {
		runCLI(t, nil, func(ctx context.Context, o *cli.Options) int { return cli.Card(ctx, o, u) }).want(t, 0, want, "")
	}
	// The probes asked for a task and created none.
	if n := len(a.Calls()); n != 0 {
		t.Errorf("the card check reached the agent %d times", n)
	}
}

// TestCLICardProblems: a card that breaks the rules of its version and
// lists interfaces that do not serve A2A is reported, exit 1.
func TestCLICardProblems(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(404)
		w.Write([]byte("<html>not here</html>"))
	}))
	defer page.Close()
	dead := deadURL(t)
	card := `{"name":"Bad","description":"","version":"1","protocolVersion":"0.3.0","url":"` + dead + `",
	 "preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"` + page.URL + `/rest","transport":"HTTP+JSON"}],
	 "defaultInputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(card))
	}))
	defer srv.Close()
	r := runCLI(t, nil, func(ctx context.Context, o *cli.Options) int { return cli.Card(ctx, o, srv.URL) })
	if r.code != 1 || r.err != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.err)
	}
	_, problems, _ := strings.Cut(r.out, "Problems (")
	wantProblems := `6):
  - capabilities: is required
  - defaultOutputModes: is required
  - description: is required
  - skills[0].tags: at least one tag is required
  - interface JSONRPC 0.3.0 ` + dead + `: does not answer: `
	if !strings.HasPrefix(problems, wantProblems) {
		t.Fatalf("problems:\n%s\nwant them to start:\n%s", problems, wantProblems)
	}
	if !strings.Contains(problems, "\n  - interface HTTP+JSON 0.3.0 "+page.URL+`/rest: answers HTTP 404 with "text/html", not an A2A answer`+"\n") {
		t.Fatalf("the HTML page is not reported:\n%s", problems)
	}
	if !strings.Contains(r.out, "  HTTP+JSON  0.3.0  "+page.URL+"/rest  does not answer as A2A\n") {
		t.Fatalf("interfaces:\n%s", r.out)
	}
}

// TestCLISend: `caddy a2a send` prints the answer in both versions,
// blocking, streamed (as text and as events, the empty last chunk left
// out) and the raw frames with --json.
func TestCLISend(t *testing.T) {
	a := streamAgent(t, nil)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	for _, v := range []string{"", "0.3", "1.0"} {
		runCLI(t, version(v), send(base, "hi", cli.SendOptions{})).want(t, 0, "chunk one, chunk two\n", "")
		r := runCLI(t, version(v), send(base, "hi", cli.SendOptions{Stream: true}))
		r.out = ids.ReplaceAllString(r.out, "ID")
		r.want(t, 0, `task ID (context ID): submitted
status: working
status: working: thinking
chunk one, chunk two
status: completed
`, "")
		r = runCLI(t, version(v), send(base, "hi", cli.SendOptions{Events: true}))
		r.out = ids.ReplaceAllString(r.out, "ID")
		r.want(t, 0, `task ID (context ID): submitted
status: working
status: working: thinking
artifact ID: chunk one, 
artifact ID: chunk two
status: completed
`, "")
	}
	// --json: each SSE event's data as sent, one per line, in the wire
	// form of the version spoken.
	r := runCLI(t, func(o *cli.Options) { o.Version = "0.3"; o.JSON = true }, send(base, "hi", cli.SendOptions{Stream: true}))
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != 0 || len(lines) != 7 || !strings.Contains(lines[0], `"kind":"task"`) || !strings.Contains(lines[6], `"final":true`) {
		t.Fatalf("exit %d, frames:\n%s", r.code, r.out)
	}
	r = runCLI(t, func(o *cli.Options) { o.Version = "1.0"; o.JSON = true }, send(base, "hi", cli.SendOptions{}))
	if r.code != 0 || !strings.HasPrefix(r.out, `{"jsonrpc":"2.0","id":`) || !strings.Contains(r.out, `"state":"TASK_STATE_COMPLETED"`) {
		t.Fatalf("exit %d, frame:\n%s", r.code, r.out)
	}
}

// TestCLIHostileAgent: an honest endpoint passes on what its agent says,
// control sequences included (they are text to A2A); the command shows
// them escaped, lines and tabs kept, in every form it prints, and --json
// keeps them as the server sent them.
func TestCLIHostileAgent(t *testing.T) {
	a := newAgent(t, func(w http.ResponseWriter, _ *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[HProblems:     none\r\n\tline 2\u202e\u009b\x1b]8;;https://evil.example\x1b\\docs")
	})
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	shown := `\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[HProblems:     none` + "\n\tline 2" + `\u202e\u009b\x1b]8;;https://evil.example\x1b\docs`
	for _, v := range []string{"0.3", "1.0"} {
		runCLI(t, version(v), send(base, "hi", cli.SendOptions{})).want(t, 0, shown+"\n", "")
		r := runCLI(t, version(v), send(base, "hi", cli.SendOptions{Stream: true}))
		if r.code != 0 || !strings.Contains(r.out, "\n"+shown+"\n") || strings.ContainsAny(r.out, "\x1b\x07\r\u202e\u009b") {
			t.Errorf("%s, streamed: exit %d, stdout:\n%s", v, r.code, r.out)
		}
		r = runCLI(t, version(v), send(base, "hi", cli.SendOptions{Events: true}))
		if r.code != 0 || !strings.Contains(r.out, "\nartifact ") || !strings.Contains(r.out, ": "+shown+"\n") || strings.ContainsAny(r.out, "\x1b\x07\r\u202e\u009b") {
			t.Errorf("%s, events: exit %d, stdout:\n%s", v, r.code, r.out)
		}
	}
	r := runCLI(t, func(o *cli.Options) { o.Version = "1.0"; o.JSON = true }, send(base, "hi", cli.SendOptions{}))
	if r.code != 0 || !strings.Contains(r.out, `"text":"\u001b]52;c;ZXZpbA==\u0007\u001b[2J\u001b[HProblems:     none\r\n\tline 2`+"\u202e\u009b"+`\u001b]8;;https://evil.example\u001b\\docs"`) {
		t.Errorf("--json: exit %d, stdout:\n%s", r.code, r.out)
	}
}

// TestCLIMultiTurn: a task that waits for input exits 2 and says how to
// continue it; continued with --task, it completes (exit 0).
func TestCLIMultiTurn(t *testing.T) {
	a := askAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	for _, v := range []string{"0.3", "1.0"} {
		r := runCLI(t, version(v), send(base, "weather?", cli.SendOptions{}))
		id := ids.FindString(r.err)
		r.want(t, 2, "Which city?\n", "task "+id+" is input-required; continue it with: caddy a2a send "+base+" --task "+id+" <text>\n")
		runCLI(t, version(v), send(base, "Paris", cli.SendOptions{TaskID: id})).want(t, 0, "Sunny in Paris\n", "")
		// The task is over: continuing it again is the server's error,
		// printed with its exact code.
		runCLI(t, version(v), send(base, "Oslo", cli.SendOptions{TaskID: id})).want(t, 1, "",
			"error -32004: Task is in a terminal state and cannot accept messages\n")
		runCLI(t, version(v), send(base, "Oslo", cli.SendOptions{TaskID: "no-such-task"})).want(t, 1, "", "error -32001: Task not found\n")
	}
}

// TestCLIFailedTask: a task the agent fails exits 1 with the status
// message the server sends (never the agent's own error text).
func TestCLIFailedTask(t *testing.T) {
	a := failAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	for _, stream := range []bool{false, true} {
		r := runCLI(t, nil, send(base, "hi", cli.SendOptions{Stream: stream}))
		id := ids.FindString(r.err)
		if r.code != 1 || !strings.HasPrefix(r.err, "task "+id+" failed: ") || strings.Contains(r.err+r.out, "SECRET") {
			t.Fatalf("stream %v: exit %d, stdout %q, stderr %q", stream, r.code, r.out, r.err)
		}
	}
}

// TestCLIGated: behind basic_auth the commands say the server wants
// credentials; with --user they send, list and cancel the caller's own
// tasks.
func TestCLIGated(t *testing.T) {
	slow := slowAgent(t)
	load(t, `
http://:9080 {
	basic_auth /a2a {
		alice {{.Alice}}
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
	}
}
`, map[string]any{"Agent": slow.URL(), "Alice": aliceHash})
	runCLI(t, nil, send(base, "hi", cli.SendOptions{})).want(t, 1, "",
		"HTTP 401 Unauthorized: the server wants credentials (--user name:password or -H 'Authorization: …')\n")
	alice := func(o *cli.Options) {
		if err := o.SetUser("alice:alice-pw"); err != nil {
			t.Fatal(err)
		}
	}
	// The card check sees the gated interfaces answer, asking for credentials.
	r := runCLI(t, nil, func(ctx context.Context, o *cli.Options) int { return cli.Card(ctx, o, base) })
	if r.code != 0 || !strings.Contains(r.out, "  JSONRPC    1.0    http://127.0.0.1:9080/a2a  needs credentials (HTTP 401)\n") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.out, r.err)
	}

	done := make(chan cliRun, 1)
	go func() { done <- runCLI(t, alice, send(base, "hi", cli.SendOptions{Stream: true})) }()
	id := slow.next(t).TaskID
	tasks := func(ctx context.Context, o *cli.Options) int {
		return cli.Tasks(ctx, o, base, cli.TasksOptions{State: "working"})
	}
	r = runCLI(t, alice, tasks)
	if r.code != 0 || !regexp.MustCompile(`^`+id+`  working         \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  context `+ids.String()+"\n$").MatchString(r.out) {
		t.Fatalf("tasks: exit %d:\n%s%s", r.code, r.out, r.err)
	}
	r = runCLI(t, alice, func(ctx context.Context, o *cli.Options) int { return cli.Cancel(ctx, o, base, id) })
	if r.code != 0 || !strings.HasPrefix(r.out, id+"  canceled ") {
		t.Fatalf("cancel: exit %d:\n%s%s", r.code, r.out, r.err)
	}
	select {
	case r := <-done:
		if r.code != 1 || r.err != "task "+id+" canceled\n" || !strings.HasSuffix(r.out, "status: canceled\n") {
			t.Fatalf("the canceled stream: exit %d:\n%s%s", r.code, r.out, r.err)
		}
	case <-timeout():
		t.Fatal("the stream did not end with the cancel")
	}
	// Canceling it again is the server's -32002.
	runCLI(t, alice, func(ctx context.Context, o *cli.Options) int { return cli.Cancel(ctx, o, base, id) }).want(t, 1, "",
		"error -32002: Task cannot be canceled\n")
	runCLI(t, alice, func(ctx context.Context, o *cli.Options) int {
		return cli.Tasks(ctx, o, base, cli.TasksOptions{State: "nonsense"})
	}).want(t, 1, "", "caddy a2a tasks: --state \"nonsense\": want submitted, working, input-required, auth-required, completed, failed, canceled or rejected\n")
}

// TestCLISecuredCard: the README's gated setup (basic_auth on the RPC
// routes, the card public and saying so with security_scheme and
// security, an extended card) is read by every command: a2a-go's card
// parser cannot read 1.0's strict ProtoJSON securityRequirements
// (a2a-go#430), so the commands read it rewritten, and still print the
// document as served and check it as served.
func TestCLISecuredCard(t *testing.T) {
	a := textAgent(t)
	load(t, `
http://:9080 {
	@a2a path /a2a /a2a/*
	basic_auth @a2a {
		alice {{.Alice}}
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		security_scheme users basic {
			description "The account you were given"
		}
		security users`+securedExtendedCard+`
		inspector
	}
}
`, map[string]any{"Agent": a.URL(), "Alice": aliceHash})
	alice := func(o *cli.Options) {
		if err := o.SetUser("alice:alice-pw"); err != nil {
			t.Fatal(err)
		}
	}
	card := func(ctx context.Context, o *cli.Options) int { return cli.Card(ctx, o, base) }
	runCLI(t, nil, card).want(t, 0, `Card:         http://127.0.0.1:9080/.well-known/agent-card.json
Name:         Test agent
Description:  An agent under test.
Version:      1.0.0
Interfaces:
  JSONRPC    1.0    http://127.0.0.1:9080/a2a  needs credentials (HTTP 401)
  JSONRPC    0.3    http://127.0.0.1:9080/a2a  needs credentials (HTTP 401)
Capabilities: streaming, extended card
Input modes:  text/plain, application/json
Output modes: text/plain, application/json
Skills:
  echo: Echo: Echoes. [test]
Security:
  scheme users: HTTP Basic
  requires:  users
Problems:     none
`, "")

	// --json prints the document as served, its security members as
	// they are (the strict ProtoJSON form a2a-go cannot read).
	_, doc := get(t, "GET", base+"/.well-known/agent-card.json")
	for _, m := range []string{`"securityRequirements":[{"schemes":{"users":{}}}]`, `"security":[{"users":[]}]`} {
		if !strings.Contains(string(doc), m) {
			t.Fatalf("the served card lacks %s:\n%s", m, doc)
		}
	}
	runCLI(t, func(o *cli.Options) { o.JSON = true }, card).want(t, 0, string(doc)+"\n", "")

	for _, v := range []string{"", "0.3", "1.0"} {
		runCLI(t, version(v), send(base, "hi", cli.SendOptions{})).want(t, 1, "",
			"HTTP 401 Unauthorized: the server wants credentials (--user name:password or -H 'Authorization: …')\n")
		runCLI(t, func(o *cli.Options) { alice(o); o.Version = v }, send(base, "hi", cli.SendOptions{})).want(t, 0, "Hello, hi\n", "")
	}
	r := runCLI(t, alice, func(ctx context.Context, o *cli.Options) int { return cli.Tasks(ctx, o, base, cli.TasksOptions{}) })
	if r.code != 0 || r.err != "" || len(strings.Split(strings.TrimSpace(r.out), "\n")) != 3 || !strings.Contains(r.out, "  completed  ") {
		t.Fatalf("tasks: exit %d:\n%s%s", r.code, r.out, r.err)
	}

	// The inspector's problems list is the same card check.
	if resp, p := get(t, "GET", base+"/a2a/inspector/problems", withAuth("alice", "alice-pw")); resp.StatusCode != 200 || string(p) != `{"hybrid":[],"v10":[]}` {
		t.Errorf("inspector problems: %d %s", resp.StatusCode, p)
	}
}
