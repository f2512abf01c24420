package a2aagent

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The timeout bounds the whole run, the wait for the agent to name its
// task included: a streaming send the agent holds without naming one
// (before its answer's headers, or after them) ends at the timeout, not
// cancelWait later. An agent that names its task after that is still
// told to cancel it.
func TestRunTimeoutBeforeTheAgentNamesItsTask(t *testing.T) {
	for _, tc := range []struct {
		name string
		// headers: the agent answers 200 before it holds; late: it names
		// its task 1.5s in, after the timeout.
		headers, late bool
	}{
		{name: "no answer"},
		{name: "headers", headers: true},
		{name: "named late", headers: true, late: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, protocol.V10, true, nil)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
			canceled := make(chan string, 1)
			f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
				switch req.Method {
				case "SendStreamingMessage":
					if tc.headers {
						w.Header().Set("Content-Type", "text/event-stream")
						w.WriteHeader(http.StatusOK)
						http.NewResponseController(w).Flush()
					}
					if tc.late {
						select {
						case <-time.After(1500 * time.Millisecond):
						case <-r.Context().Done():
							return
						}
						f.frames(w, req, protocol.Event{Task: task("late", protocol.StateWorking)})
						http.NewResponseController(w).Flush()
					}
					select {
					case <-r.Context().Done():
					case <-release:
					}
				case "CancelTask":
					p, _ := f.codec.DecodeTaskID(req.Params)
					f.result(w, req, f.codec.AppendTask(nil, task(p.ID, protocol.StateCanceled)))
					canceled <- p.ID
				}
			}
			a := newAgent(t, f, func(c *Config) { c.Timeout = time.Second })
			start := time.Now()
			s, err := a.Run(context.Background(), userReq("hold", ""))
			if err == nil {
				for range 10 {
					if _, err = s.Next(); err != nil {
						break
					}
				}
				s.Close()
			}
			if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 3*time.Second {
				t.Fatalf("the run ended after %v with %v; want the timeout, in about 1s", took, err)
			}
			// The log names the setting and the agent's interface.
			if want := "the agent at " + f.srv.URL + "/rpc did not finish within `timeout 1s`"; err.Error() != want {
				t.Fatalf("err %q, want %q", err, want)
			}
			if !tc.late {
				return
			}
			select {
			case id := <-canceled:
				if id != "late" {
					t.Fatalf("canceled %q", id)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the agent was not told of the task it named after the timeout")
			}
		})
	}
}
