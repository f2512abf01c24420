package cli

import (
	"context"
	"testing"
)

// TestTasksOn03: ListTasks is A2A 1.0's alone; asked over 0.3 (a2a-go
// refuses it without a call), the command says so, whether --version
// picked 0.3 or the server speaks nothing else.
func TestTasksOn03(t *testing.T) {
	both := `{"name":"A","description":"d","version":"1","supportedInterfaces":[` +
		`{"url":"%s/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"%s/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],` +
		`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`
	only03 := `{"name":"A","description":"d","version":"1","url":"%s/a2a","protocolVersion":"0.3.0","preferredTransport":"JSONRPC",` +
		`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`
	tasks := func(a *fakeAgent) func(context.Context, *Options) int {
		return func(ctx context.Context, o *Options) int { return Tasks(ctx, o, a.URL, TasksOptions{}) }
	}
	a := newFakeAgent(t, both, nil)
	runCommand(t, func(o *Options) { o.Version = "0.3" }, tasks(a)).
		want(t, 1, "", "error: ListTasks exists only in A2A 1.0, not in 0.3 (--version 0.3)\n")
	b := newFakeAgent(t, only03, nil)
	runCommand(t, nil, tasks(b)).want(t, 1, "", "error: ListTasks exists only in A2A 1.0, and this server speaks 0.3\n")
	if n := len(a.headers()) + len(b.headers()); n != 2 {
		t.Errorf("%d requests, want the two cards' alone", n)
	}
	// Over 1.0, the server's own refusal is printed as it came.
	runCommand(t, nil, tasks(a)).want(t, 1, "", "error -32001: Task not found\n")
}
