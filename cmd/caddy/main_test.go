package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// ids stands for the random task ids in the commands' output.
var ids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// caddyBin is this command built once for the tests, as a user runs it.
var caddyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "caddy-a2a-bin")
	if err != nil {
		panic(err)
	}
	caddyBin = filepath.Join(dir, "caddy")
	build := exec.Command("go", "build", "-o", caddyBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building caddy:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// caddy runs the binary to its end: exit code, stdout, stderr.
func caddy(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, caddyBin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("caddy %v: %v", args, err)
	return 0, "", ""
}

func TestHelp(t *testing.T) {
	code, out, _ := caddy(t, "help")
	if code != 0 || !strings.Contains(out, "\n  a2a            Serve an agent over A2A, or talk to any A2A server\n") {
		t.Fatalf("caddy help: exit %d:\n%s", code, out)
	}
	code, out, _ = caddy(t, "a2a", "--help")
	for _, sub := range []string{"cancel", "card", "send", "serve", "tasks"} {
		if code != 0 || !strings.Contains(out, "\n  "+sub+" ") {
			t.Fatalf("caddy a2a --help lacks %s: exit %d:\n%s", sub, code, out)
		}
	}
	// Caddy's footer points to its site, which does not document a2a.
	const footer = "\nFull documentation is available at:\nhttps://github.com/caddy-a2a/caddy-a2a#readme\n"
	for _, args := range [][]string{{"a2a", "--help"}, {"help", "a2a"}, {"a2a", "send", "--help"}, {"a2a", "serve", "--help"}} {
		code, out, _ = caddy(t, args...)
		if code != 0 || !strings.HasSuffix(out, "\n"+footer) || strings.Contains(out, "caddyserver.com") {
			t.Errorf("caddy %v: exit %d, the help ends:\n%s", args, code, out[max(0, len(out)-200):])
		}
	}
	for sub, usage := range map[string]string{
		"serve": "caddy a2a serve --to <upstream-url> [--from <addr>]",
		"send":  "caddy a2a send <url> <text> [--stream] [--events] [--task <id>]",
		"card":  "caddy a2a card <url> [--json]",
	} {
		code, out, _ = caddy(t, "a2a", sub, "--help")
		if code != 0 || !strings.Contains(out, "Usage:\n  "+usage) {
			t.Fatalf("caddy a2a %s --help: exit %d:\n%s", sub, code, out)
		}
	}
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestServe: `caddy a2a serve` in front of an agent written to the agent
// contract answers a2a-go's client, and the client commands against it
// exit as documented.
func TestServe(t *testing.T) {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct {
			Input string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&call)
		w.Header().Set("Content-Type", "text/plain")
		if call.Input == "ask" {
			w.Header().Set("A2A-Task-State", "input-required")
			io.WriteString(w, "Which city?")
			return
		}
		fmt.Fprintf(w, "Hello, %s", call.Input)
	}))
	defer agent.Close()

	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	serve := exec.Command(caddyBin, "a2a", "serve", "--from", base, "--to", agent.URL+"/agent", "--name", "Greeter",
		"--skill", "greet:Greeting:Says hello: politely", "--inspector")
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	serve.Stderr = &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		serve.Process.Kill()
		serve.Wait()
		if t.Failed() {
			t.Logf("caddy a2a serve logged:\n%s", logs.String())
		}
	}()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for _, want := range []string{"Agent card: " + base + "/.well-known/agent-card.json", "JSON-RPC:   " + base + "/a2a",
		"Inspector:  " + base + "/a2a/inspector"} {
		select {
		case l := <-lines:
			if l != want {
				t.Fatalf("serve printed %q, want %q", l, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("caddy a2a serve printed nothing")
		}
	}

	if resp, err := http.Get(base + "/a2a/inspector"); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("the inspector: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// a2a-go's own client, from the card.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "Greeter" || len(card.Skills) != 1 || card.Skills[0].ID != "greet" || card.Skills[0].Description != "Says hello: politely" {
		t.Fatalf("card %+v", card)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Ann"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "Hello, Ann" {
		t.Fatalf("a2a-go got %#v", res)
	}

	// The commands, as a shell runs them: their exit codes.
	for _, c := range []struct {
		args      []string
		code      int
		out, errs string
	}{
		{[]string{"send", base, "Bob"}, 0, "Hello, Bob\n", ""},
		{[]string{"send", base + "/a2a", "Cy", "--version", "0.3"}, 0, "Hello, Cy\n", ""},
		{[]string{"send", base, "ask"}, 2, "Which city?\n", "task ID is input-required; continue it with: caddy a2a send " + base + " --task ID <text>\n"},
		{[]string{"send", base, "Oslo", "--task", "no-such-task"}, 1, "", "error -32001: Task not found\n"},
		{[]string{"send", base, "hi", "--version", "2.0"}, 1, "", "caddy a2a send: --version \"2.0\": want 0.3 or 1.0\n"},
		{[]string{"cancel", base, "no-such-task"}, 1, "", "error -32001: Task not found\n"},
		{[]string{"tasks", base}, 0, "", "no tasks\n"},
		{[]string{"card", agent.URL}, 1, "", "caddy a2a card: fetching the card at " + agent.URL + "/.well-known/agent-card.json: the answer is not a JSON object\n"},
	} {
		code, out, errs := caddy(t, append([]string{"a2a"}, c.args...)...)
		errs = ids.ReplaceAllString(errs, "ID")
		if code != c.code || out != c.out || errs != c.errs {
			t.Errorf("caddy a2a %v: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", c.args, code, out, errs, c.code, c.out, c.errs)
		}
	}
	code, out, errs := caddy(t, "a2a", "card", base)
	if code != 0 || !strings.HasPrefix(out, "Card:         "+base+"/.well-known/agent-card.json\nName:         Greeter\n") ||
		!strings.Contains(out, "\n  greet: Greeting: Says hello: politely [greet]\n") || !strings.HasSuffix(out, "Problems:     none\n") {
		t.Errorf("caddy a2a card: exit %d:\n%s%s", code, out, errs)
	}
}
