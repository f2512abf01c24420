package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The inspector's sites: one open (every caller the owner "inspector",
// so the page's task list shows its tasks), one behind basic_auth on the
// RPC path only (the page and the card stay public).
const (
	inspectorPort      = 9286
	gatedInspectorPort = 9287
)

var (
	inspectorURL      = fmt.Sprintf("http://127.0.0.1:%d", inspectorPort)
	gatedInspectorURL = fmt.Sprintf("http://127.0.0.1:%d", gatedInspectorPort)
	inspectorPage     = "/a2a/inspector"
	theInspectorAgent *inspectorAgent
)

func inspectorSites(agentURL string) string {
	card := `
		name "Inspector test agent"
		description "Talks to the inspector page."
		skill echo {
			name "Echo"
			description "Echoes."
			tags test
		}`
	return fmt.Sprintf(`
http://:%[1]d {
	bind 127.0.0.1
	a2a {
		upstream %[3]s
		owner inspector
		inspector
		store memory {
			share inspector
		}%[4]s
	}
}

http://:%[2]d {
	bind 127.0.0.1
	basic_auth /a2a {
		alice %[5]s
	}
	a2a {
		upstream %[3]s
		inspector
		store memory {
			share gated-inspector
		}%[4]s
	}
}
`, inspectorPort, gatedInspectorPort, agentURL, card, aliceHash)
}

// inspectorCall is one call the module made to the inspector's agent.
type inspectorCall struct {
	TaskID  string            `json:"taskId"`
	Input   json.RawMessage   `json:"input"`
	History []json.RawMessage `json:"history"`
	User    string            `json:"user"`
}

// inspectorAgent answers the agent contract: "stream" is a status, a
// chunk, then (once release is closed) a second chunk; "ask" asks for a
// city, and its follow-up answers; "slow" holds the call until the
// module aborts it; a file comes back renamed; anything else is
// "Hello, <input>".
type inspectorAgent struct {
	mu      sync.Mutex
	calls   []inspectorCall
	release chan struct{}
	aborted chan string
}

func newInspectorAgent() *inspectorAgent {
	return &inspectorAgent{release: make(chan struct{}), aborted: make(chan string, 8)}
}

// gate is a new release for the next "stream" call.
func (a *inspectorAgent) gate() chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.release = make(chan struct{})
	return a.release
}

func (a *inspectorAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var c inspectorCall
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.calls = append(a.calls, c)
	release := a.release
	a.mu.Unlock()
	var text string
	_ = json.Unmarshal(c.Input, &text)
	var file struct {
		Bytes    string `json:"bytes"`
		MimeType string `json:"mimeType"`
		Name     string `json:"name"`
	}
	_ = json.Unmarshal(c.Input, &file)
	switch {
	case file.Bytes != "":
		w.Header().Set("Content-Type", "application/x-ndjson")
		out, _ := json.Marshal(map[string]any{"file": map[string]string{"bytes": file.Bytes, "mimeType": file.MimeType, "name": "echo-" + file.Name}})
		w.Write(append(out, '\n'))
	case text == "stream":
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"status":"working","message":"thinking"}`+"\n"+`{"text":"one "}`+"\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `{"text":"two"}`+"\n")
	case text == "ask" && len(c.History) == 0:
		w.Header().Set("A2A-Task-State", "input-required")
		io.WriteString(w, "Which city?")
	case len(c.History) > 0:
		fmt.Fprintf(w, "Sunny in %s", text)
	case text == "slow":
		<-r.Context().Done()
		a.aborted <- c.TaskID
	default:
		fmt.Fprintf(w, "Hello, %s", text)
	}
}

func (a *inspectorAgent) callsOf(taskID string) []inspectorCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []inspectorCall
	for _, c := range a.calls {
		if c.TaskID == taskID {
			out = append(out, c)
		}
	}
	return out
}

// inspectorTab is a tab on an inspector page, recording every URL the
// browser asked for.
type inspectorTab struct {
	t   *testing.T
	ctx context.Context

	mu   sync.Mutex
	urls []string
}

// openInspector opens the page in a browser context of its own (no
// credentials or cache shared with another test). auth, when set, answers
// the browser's credentials prompt (what a person types in the dialog
// basic_auth's challenge opens); cancel says the person dismissed it.
func openInspector(t *testing.T, url string, auth *fetch.AuthChallengeResponse) *inspectorTab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tab := &inspectorTab{t: t, ctx: ctx}
	// The first action starts the tab (with a context that is not the
	// timed one below, which would end the tab with it).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 880)); err != nil {
		t.Fatal(err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelT)
	tab.ctx = ctx
	if auth != nil {
		if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: new(true)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			tab.mu.Lock()
			tab.urls = append(tab.urls, e.Request.URL)
			tab.mu.Unlock()
		case *fetch.EventRequestPaused:
			go chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		case *fetch.EventAuthRequired:
			go chromedp.Call(ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: e.RequestID, AuthChallengeResponse: auth})
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate to %s: %v", url, err)
	}
	return tab
}

// eval runs js in the page.
func eval[T any](tab *inspectorTab, js string) T {
	tab.t.Helper()
	v, err := chromedp.Run(tab.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		tab.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitFor polls js (a boolean expression) until it holds, for 15s.
func (tab *inspectorTab) waitFor(what, js string) {
	tab.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(25 * time.Millisecond) {
		if eval[bool](tab, js) {
			return
		}
		if time.Now().After(deadline) {
			tab.t.Fatalf("the page never showed %s (%s); it shows:\n%s", what, js, eval[string](tab, "document.body.innerText"))
		}
	}
}

func (tab *inspectorTab) text(sel string) string {
	tab.t.Helper()
	return eval[string](tab, fmt.Sprintf("(document.querySelector(%q) || {}).textContent || ''", sel))
}

// send types text (and attaches files) and presses Send.
func (tab *inspectorTab) send(text string, files ...string) {
	tab.t.Helper()
	eval[bool](tab, fmt.Sprintf("(document.getElementById('text').value = %q, true)", text))
	var steps []chromedp.Action[chromedp.Void]
	if len(files) > 0 {
		steps = append(steps, chromedp.SetUploadFiles("#file", files))
	}
	steps = append(steps, chromedp.Click("#send"))
	if err := chromedp.Do(tab.ctx, steps...); err != nil {
		tab.t.Fatal(err)
	}
}

// taskView is a task's bubble in the chat, as the page shows it.
type taskView struct {
	ID        string `json:"id"`
	State     string `json:"state"`
	Artifacts string `json:"artifacts"`
	Status    string `json:"status"`
}

const viewsJS = `[...document.querySelectorAll('.bubble.agent[data-task]')].map(b => ({id: b.dataset.task,
	state: b.dataset.state || '', artifacts: b.querySelector('.artifacts').textContent, status: b.querySelector('.status').textContent}))`

func (tab *inspectorTab) views() []taskView { return eval[[]taskView](tab, viewsJS) }

// last is the newest task's view once cond holds for it.
func (tab *inspectorTab) last(what string, cond string) taskView {
	tab.t.Helper()
	tab.waitFor(what, fmt.Sprintf("(() => { const v = %s; const last = v[v.length-1]; return !!last && (%s); })()", viewsJS, cond))
	v := tab.views()
	return v[len(v)-1]
}

// offOrigin lists the URLs the browser asked for outside origin (data:
// and blob: URLs are the page's own).
func (tab *inspectorTab) offOrigin(origin string) []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	var out []string
	for _, u := range tab.urls {
		if !strings.HasPrefix(u, origin+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			out = append(out, u)
		}
	}
	return out
}

// TestInspector drives the page as a person would: the card shows, a
// streamed answer arrives chunk by chunk, an input-required task is
// continued in place, the task list shows the tasks, cancel ends a slow
// task, a file goes to the agent and its answer downloads, and nothing is
// asked of another origin.
func TestInspector(t *testing.T) {
	tab := openInspector(t, inspectorURL+inspectorPage, nil)

	// The card (both documents checked by the server, the interfaces
	// probed by the page).
	tab.waitFor("the card", `document.querySelector('#problems li') !== null && !document.querySelector('#interfaces').textContent.includes('…')`)
	if got := tab.text("#agent-name"); got != "Inspector test agent" {
		t.Errorf("name %q", got)
	}
	if got := tab.text("#skills"); got != "Echo (echo): Echoes. [test]" {
		t.Errorf("skills %q", got)
	}
	if got := tab.text("#problems"); got != "none" {
		t.Errorf("problems %q", got)
	}
	if got := tab.text("#interfaces"); got != "JSONRPC 1.0 "+inspectorURL+"/a2a answersJSONRPC 0.3 "+inspectorURL+"/a2a answers" {
		t.Errorf("interfaces %q", got)
	}
	if err := chromedp.Do(tab.ctx, chromedp.Click(`.tab[data-doc="hybrid"]`)); err != nil {
		t.Fatal(err)
	}
	tab.waitFor("the 0.3 card's interfaces", `document.querySelector('#interfaces').textContent === "JSONRPC 1.0 `+inspectorURL+`/a2a answersJSONRPC 0.3 `+inspectorURL+`/a2a answers"`)
	if got := tab.text("#problems"); got != "none" {
		t.Errorf("the hybrid card's problems %q", got)
	}

	// A stream: the first chunk shows while the agent holds the second.
	release := theInspectorAgent.gate()
	tab.send("stream")
	v := tab.last("the first chunk", `last.artifacts === 'one ' && last.state === 'working'`)
	if v.Status != "thinking" {
		t.Errorf("the working status says %q", v.Status)
	}
	close(release)
	if v2 := tab.last("the whole answer", `last.state === 'completed'`); v2.ID != v.ID || v2.Artifacts != "one two" {
		t.Errorf("after the stream: %+v (was %+v)", v2, v)
	}
	frames := tab.text("#frames")
	if !strings.Contains(frames, `"method":"SendStreamingMessage"`) || !strings.Contains(frames, `"artifactUpdate"`) || !strings.Contains(frames, "HTTP 200 (event stream)") {
		t.Errorf("the frames panel lacks the stream:\n%s", frames)
	}

	// Multi-turn, continued in place.
	tab.send("ask")
	ask := tab.last("the question", `last.state === 'input-required'`)
	if ask.Status != "Which city?" || tab.text("#continuing-id") != ask.ID {
		t.Fatalf("the question: %+v, continuing %q", ask, tab.text("#continuing-id"))
	}
	tab.send("Paris")
	if done := tab.last("the answer", `last.state === 'completed' && last.artifacts.includes('Sunny')`); done.ID != ask.ID || done.Artifacts != "Sunny in Paris" {
		t.Errorf("the continued task: %+v", done)
	}
	if said := tab.text(fmt.Sprintf(`.bubble.agent[data-task=%q] .said`, ask.ID)); said != "Which city?" {
		t.Errorf("the question is no longer shown above the answer: %q", said)
	}
	if n := len(theInspectorAgent.callsOf(ask.ID)); n != 2 {
		t.Errorf("the agent got %d calls for the continued task, want 2", n)
	}
	if n := strings.Count(strings.Join(eval[[]string](tab, `[...document.querySelectorAll('.bubble.agent[data-task]')].map(b => b.dataset.task)`), " "), ask.ID); n != 1 {
		t.Errorf("the continued task has %d bubbles, want 1", n)
	}

	// The task list.
	tab.waitFor("the task list", fmt.Sprintf(`!!document.querySelector('#tasks tr[data-task=%q]')`, ask.ID))
	if got := tab.text(fmt.Sprintf(`#tasks tr[data-task=%q] .state`, ask.ID)); got != "completed" {
		t.Errorf("the listed task's state %q", got)
	}

	// Cancel a slow task from the list.
	tab.send("slow")
	slow := tab.last("the slow task", `last.state === 'working' || last.state === 'submitted'`)
	if err := chromedp.Do(tab.ctx, chromedp.Click("#refresh")); err != nil {
		t.Fatal(err)
	}
	cancelBtn := fmt.Sprintf(`#tasks tr[data-task=%q] button.cancel`, slow.ID)
	tab.waitFor("the slow task's cancel button", fmt.Sprintf("!!document.querySelector(%q)", cancelBtn))
	if err := chromedp.Do(tab.ctx, chromedp.Click(cancelBtn)); err != nil {
		t.Fatal(err)
	}
	tab.last("the canceled task", fmt.Sprintf(`last.id === %q && last.state === 'canceled'`, slow.ID))
	select {
	case id := <-theInspectorAgent.aborted:
		if id != slow.ID {
			t.Errorf("the agent saw %s aborted, want %s", id, slow.ID)
		}
	case <-time.After(10 * time.Second):
		t.Error("the agent's call was not aborted")
	}

	// A file, attached and downloaded.
	file := filepath.Join(t.TempDir(), "note.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	tab.send("", file)
	got := tab.last("the file", `last.state === 'completed' && !!document.querySelector('.bubble.agent:last-child a.file')`)
	link := eval[map[string]string](tab, `(() => { const a = document.querySelector('.bubble.agent:last-child a.file'); return {text: a.textContent, download: a.download, href: a.href}; })()`)
	if link["text"] != "echo-note.txt (text/plain, 5 bytes)" || link["download"] != "echo-note.txt" || !strings.HasPrefix(link["href"], "blob:"+inspectorURL+"/") {
		t.Errorf("the download link %v", link)
	}
	if calls := theInspectorAgent.callsOf(got.ID); len(calls) != 1 || !strings.Contains(string(calls[0].Input), `"bytes":"aGVsbG8="`) {
		t.Errorf("the agent got %+v", calls)
	}

	if off := tab.offOrigin(inspectorURL); len(off) > 0 {
		t.Errorf("the page asked other origins for %q", off)
	}
	if errBox := eval[bool](tab, `document.getElementById('error').hidden`); !errBox {
		t.Errorf("the page shows an error: %s", tab.text("#error"))
	}

	// The screenshot the README shows, of the page as it is now.
	shot, err := chromedp.Run(tab.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "inspector.png")
	if os.Getenv("INSPECTOR_SCREENSHOT") == "update" {
		out = filepath.Join("..", "docs", "inspector.png")
	}
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInspectorGated: behind basic_auth on the RPC path, the page (public)
// works once the browser's credentials dialog is answered, and shows the
// server's refusal when it is dismissed.
func TestInspectorGated(t *testing.T) {
	t.Run("dismissed", func(t *testing.T) {
		tab := openInspector(t, gatedInspectorURL+inspectorPage, &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth})
		tab.waitFor("the refusal", `!document.getElementById('error').hidden`)
		if got := tab.text("#error"); got != "HTTP 401 Unauthorized" {
			t.Errorf("error %q", got)
		}
		// The card is public.
		tab.waitFor("the card", `document.querySelector('#agent-name').textContent === 'Inspector test agent'`)
		tab.waitFor("the probe", `document.querySelector('#interfaces').textContent.includes('needs credentials (HTTP 401)')`)
	})
	t.Run("credentials", func(t *testing.T) {
		tab := openInspector(t, gatedInspectorURL+inspectorPage, &fetch.AuthChallengeResponse{
			Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: "alice", Password: "alice-pw"})
		tab.waitFor("the card", `document.querySelector('#agent-name').textContent === 'Inspector test agent'`)
		tab.send("Ann")
		v := tab.last("the answer", `last.state === 'completed'`)
		if v.Artifacts != "Hello, Ann" {
			t.Errorf("answer %+v", v)
		}
		if calls := theInspectorAgent.callsOf(v.ID); len(calls) != 1 || calls[0].User != "alice" {
			t.Errorf("the agent got %+v", calls)
		}
		tab.waitFor("the task list", fmt.Sprintf(`!!document.querySelector('#tasks tr[data-task=%q]')`, v.ID))
		if eval[bool](tab, `!document.getElementById('error').hidden`) {
			t.Errorf("the page shows an error: %s", tab.text("#error"))
		}
		if off := tab.offOrigin(gatedInspectorURL); len(off) > 0 {
			t.Errorf("the page asked other origins for %q", off)
		}
	})
}
