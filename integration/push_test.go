package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// pushCfg serves push notifications; the webhook receivers of the tests
// listen on 127.0.0.1, which only the allow entry lets them reach.
const pushCfg = `
http://:9080 {
	a2a {
		upstream {{.Agent}}
		owner {http.request.header.X-Owner}
		rest_path /a2a/rest` + skillBlock + `
		push {
			allow 127.0.0.1
			timeout 2s
			max_attempts 3
			max_configs 2
		}
	}
}
`

// delivery is one POST a receiver got.
type delivery struct {
	header http.Header
	body   []byte
}

// webhook is a receiver: it records every delivery and answers with the
// statuses of codes in turn, then 200.
type webhook struct {
	srv   *httptest.Server
	got   chan delivery
	mu    sync.Mutex
	codes []int
}

func newWebhook(t *testing.T, codes ...int) *webhook {
	wh := &webhook{got: make(chan delivery, 100), codes: codes}
	wh.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wh.mu.Lock()
		code := 200
		if len(wh.codes) > 0 {
			code, wh.codes = wh.codes[0], wh.codes[1:]
		}
		wh.mu.Unlock()
		w.WriteHeader(code)
		wh.got <- delivery{r.Header.Clone(), body}
	}))
	t.Cleanup(wh.srv.Close)
	return wh
}

func (wh *webhook) URL() string { return wh.srv.URL + "/hook" }

// next is the next delivery; it fails the test after 5s.
func (wh *webhook) next(t *testing.T) delivery {
	t.Helper()
	select {
	case d := <-wh.got:
		return d
	case <-timeout():
		t.Fatal("no push notification delivered")
		return delivery{}
	}
}

// none asserts that nothing more is delivered for a while.
func (wh *webhook) none(t *testing.T) {
	t.Helper()
	select {
	case d := <-wh.got:
		t.Fatalf("unexpected delivery: %s", d.body)
	case <-time.After(300 * time.Millisecond):
	}
}

// streamResponse10 is what a 1.0 receiver is sent.
type streamResponse10 struct {
	Task         *wireTask `json:"task"`
	StatusUpdate *struct {
		TaskID string `json:"taskId"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	} `json:"statusUpdate"`
	ArtifactUpdate *struct {
		TaskID   string       `json:"taskId"`
		Artifact wireArtifact `json:"artifact"`
	} `json:"artifactUpdate"`
}

// describe is one delivery's body as "task:<state>", "status:<state>"
// or "artifact:<text>", and its task id.
func (r streamResponse10) describe() (string, string) {
	switch {
	case r.Task != nil:
		return "task:" + r.Task.Status.State, r.Task.ID
	case r.StatusUpdate != nil:
		return "status:" + r.StatusUpdate.Status.State, r.StatusUpdate.TaskID
	case r.ArtifactUpdate != nil:
		var b strings.Builder
		for _, p := range r.ArtifactUpdate.Artifact.Parts {
			b.WriteString(p.Text)
		}
		return "artifact:" + b.String(), r.ArtifactUpdate.TaskID
	}
	return "?", ""
}

// TestPushInlineDeliveries: a 1.0 send with an inline config gets every
// change of its task delivered, in order, as StreamResponse bodies, with
// the token and authentication headers; the capability is on the card.
func TestPushInlineDeliveries(t *testing.T) {
	wh := newWebhook(t)
	load(t, pushCfg, map[string]any{"Agent": textAgent(t).URL()})
	url := base + "/a2a"

	_, body := get(t, "GET", base+"/.well-known/agent-card.json")
	var card struct {
		Capabilities struct {
			PushNotifications bool `json:"pushNotifications"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(body, &card); err != nil || !card.Capabilities.PushNotifications {
		t.Fatalf("card capabilities: %s", body)
	}

	var res struct {
		Task *wireTask `json:"task"`
	}
	call(t, url, "1.0", "SendMessage", map[string]any{
		"message": msg10("push", "", ""),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{
			"url": wh.URL(), "token": "tok-1", "authentication": map[string]any{"scheme": "Bearer", "credentials": "cred-1"},
		}},
	}).ok(t, &res)
	if res.Task == nil || res.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("send: %+v", res.Task)
	}
	want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:Hello, push", "status:TASK_STATE_COMPLETED"}
	for i, w := range want {
		d := wh.next(t)
		var sr streamResponse10
		if err := json.Unmarshal(d.body, &sr); err != nil {
			t.Fatalf("delivery %d: %v: %s", i, err, d.body)
		}
		got, task := sr.describe()
		if got != w || task != res.Task.ID {
			t.Fatalf("delivery %d = %s of task %s, want %s of %s: %s", i, got, task, w, res.Task.ID, d.body)
		}
		h := d.header
		if h.Get("Content-Type") != "application/json" || h.Get("X-A2A-Notification-Token") != "tok-1" ||
			h.Get("A2A-Notification-Token") != "tok-1" || h.Get("Authorization") != "Bearer cred-1" {
			t.Fatalf("delivery %d headers: %v", i, h)
		}
	}
	wh.none(t)
}

// TestPushConfigMethods: set, get, list and delete in both versions and
// over HTTP+JSON, owner-scoped, idempotent delete, the SSRF guard and
// max_configs, each with its exact error.
func TestPushConfigMethods(t *testing.T) {
	wh := newWebhook(t)
	load(t, pushCfg, map[string]any{"Agent": askAgent(t).URL()})
	url := base + "/a2a"
	alice, bob := withHeader("X-Owner", "alice"), withHeader("X-Owner", "bob")
	task := send10(t, url, msg10("weather", "", ""), alice)
	if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("task is %s", task.Status.State)
	}

	// 1.0: create (id assigned), get, list.
	var cfg struct {
		ID, TaskID, URL, Token string
	}
	call(t, url, "1.0", "CreateTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "url": wh.URL(), "token": "t10"}, alice).ok(t, &cfg)
	if cfg.ID == "" || cfg.TaskID != task.ID || cfg.URL != wh.URL() || cfg.Token != "t10" {
		t.Fatalf("created %+v", cfg)
	}
	a := call(t, url, "1.0", "GetTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": cfg.ID}, alice)
	a.ok(t, nil)
	if want := `{"id":"` + cfg.ID + `","taskId":"` + task.ID + `","url":"` + wh.URL() + `","token":"t10"}`; string(a.Result) != want {
		t.Fatalf("get:\n got %s\nwant %s", a.Result, want)
	}
	// 0.3 sets a second config with its own id; list in each version.
	call(t, url, "0.3", "tasks/pushNotificationConfig/set", map[string]any{"taskId": task.ID,
		"pushNotificationConfig": map[string]any{"id": "c03", "url": wh.URL(), "authentication": map[string]any{"schemes": []string{"Basic"}, "credentials": "dTpw"}}}, alice).ok(t, nil)
	var list10 struct {
		Configs []struct{ ID string } `json:"configs"`
	}
	call(t, url, "1.0", "ListTaskPushNotificationConfigs", map[string]any{"taskId": task.ID}, alice).ok(t, &list10)
	if len(list10.Configs) != 2 || list10.Configs[0].ID != cfg.ID || list10.Configs[1].ID != "c03" {
		t.Fatalf("1.0 list: %+v", list10)
	}
	a = call(t, url, "0.3", "tasks/pushNotificationConfig/list", map[string]any{"id": task.ID}, alice)
	a.ok(t, nil)
	if !strings.HasPrefix(string(a.Result), `[{"taskId":"`+task.ID+`","pushNotificationConfig":{"id":"`+cfg.ID+`"`) {
		t.Fatalf("0.3 list: %s", a.Result)
	}

	// The limit, the guard, the owner.
	e := call(t, url, "1.0", "CreateTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "url": wh.URL()}, alice).fails(t, -32602)
	if !strings.Contains(e.Message, "max_configs") {
		t.Errorf("third config: %s", e.Message)
	}
	for _, bad := range []struct{ url, reason string }{
		{"http://10.0.0.1/hook", "10.0.0.1 is a private address"},
		{"http://169.254.169.254/latest/meta-data", "link-local"},
		{"http://[::1]:9/hook", "loopback"},
		{"ftp://example.com/x", "http or https"},
	} {
		e := call(t, url, "1.0", "CreateTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": "c03", "url": bad.url}, alice).fails(t, -32602)
		if !strings.Contains(e.Message, bad.reason) {
			t.Errorf("%s: %s, want the reason %q", bad.url, e.Message, bad.reason)
		}
	}
	call(t, url, "1.0", "GetTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": cfg.ID}, bob).fails(t, -32001)
	call(t, url, "1.0", "CreateTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "url": wh.URL()}, bob).fails(t, -32001)
	call(t, url, "1.0", "DeleteTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": cfg.ID}, bob).fails(t, -32001)

	// Delete twice: null both times; then get is -32001.
	for range 2 {
		a := call(t, url, "1.0", "DeleteTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": cfg.ID}, alice)
		if a.Status != 200 || string(a.Result) != "null" || a.Error != nil {
			t.Fatalf("delete: %s", a.Body)
		}
	}
	call(t, url, "1.0", "GetTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": cfg.ID}, alice).fails(t, -32001)

	// The 0.3 config's receiver gets the task, as 0.3 receivers expect,
	// once per change, with its Authorization.
	send10(t, url, msg10("Paris", task.ID, ""), alice)
	var states []string
	for len(states) == 0 || states[len(states)-1] != "completed" {
		d := wh.next(t)
		var got wireTask
		if err := json.Unmarshal(d.body, &got); err != nil || got.Kind != "task" || got.ID != task.ID {
			t.Fatalf("0.3 delivery: %s", d.body)
		}
		if d.header.Get("Authorization") != "Basic dTpw" || d.header.Get("X-A2A-Notification-Token") != "" {
			t.Fatalf("0.3 delivery headers: %v", d.header)
		}
		states = append(states, got.Status.State)
	}
	if states[0] != "working" {
		t.Errorf("0.3 deliveries: %v", states)
	}
	wh.none(t)
}

// TestPushOverREST: the HTTP+JSON routes of the configs, 1.0 and 0.3.
func TestPushOverREST(t *testing.T) {
	wh := newWebhook(t)
	load(t, pushCfg, map[string]any{"Agent": askAgent(t).URL()})
	task := send10(t, base+"/a2a", msg10("weather", "", ""), withHeader("X-Owner", "carol"))
	carol := withHeader("X-Owner", "carol")
	root := base + "/a2a/rest/tasks/" + task.ID + "/pushNotificationConfigs"

	ra := restDo(t, "POST", root, `{"id":"r1","url":"`+wh.URL()+`"}`, carol)
	if want := `{"id":"r1","taskId":"` + task.ID + `","url":"` + wh.URL() + `"}`; ra.Status != 200 || string(ra.Body) != want {
		t.Fatalf("create: %d %s, want %s", ra.Status, ra.Body, want)
	}
	r, b := get(t, "GET", root+"/r1", carol)
	if r.StatusCode != 200 || !strings.Contains(string(b), `"id":"r1"`) {
		t.Fatalf("get: %d %s", r.StatusCode, b)
	}
	r, b = get(t, "GET", root+"?pageSize=1", carol)
	if r.StatusCode != 200 || !strings.HasPrefix(string(b), `{"configs":[{"id":"r1"`) {
		t.Fatalf("list: %d %s", r.StatusCode, b)
	}
	// 0.3 under /v1 sees the same config in its own shape.
	r, b = get(t, "GET", base+"/a2a/rest/v1/tasks/"+task.ID+"/pushNotificationConfigs/r1", carol)
	if want := `{"name":"tasks/` + task.ID + `/pushNotificationConfigs/r1","pushNotificationConfig":{"id":"r1","url":"` + wh.URL() + `"}}`; r.StatusCode != 200 || string(b) != want {
		t.Fatalf("0.3 get: %d %s\nwant %s", r.StatusCode, b, want)
	}
	r, b = get(t, "DELETE", root+"/r1", carol)
	if r.StatusCode != 200 || string(b) != "{}" {
		t.Fatalf("delete: %d %s", r.StatusCode, b)
	}
	r, b = get(t, "GET", root+"/r1", carol)
	if r.StatusCode != 404 || !strings.Contains(string(b), "TASK_NOT_FOUND") {
		t.Fatalf("get after delete: %d %s", r.StatusCode, b)
	}
	ra = restDo(t, "POST", root, `{"url":"http://192.168.1.1/x"}`, carol)
	if ra.Status != 400 || !strings.Contains(string(ra.Body), "private address") || !strings.Contains(string(ra.Body), "INVALID_ARGUMENT") {
		t.Fatalf("refused URL: %d %s", ra.Status, ra.Body)
	}
}

// TestPushRetries: a receiver that answers 500 then 503 gets the
// notification on the third attempt; one that keeps failing is given up
// after max_attempts (3), and a 4xx is not retried.
func TestPushRetries(t *testing.T) {
	flaky := newWebhook(t, 500, 503)
	down := newWebhook(t, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500)
	gone := newWebhook(t, 404, 404, 404, 404, 404, 404, 404, 404)
	load(t, pushCfg, map[string]any{"Agent": askAgent(t).URL()})
	url := base + "/a2a"
	for _, wh := range []*webhook{flaky, down, gone} {
		call(t, url, "1.0", "SendMessage", map[string]any{
			"message":       msg10("x", "", ""),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": wh.URL()}},
		}).ok(t, nil)
	}
	// A task asking for input: submitted, working, input-required: three
	// notifications. flaky: 2 failures + 3; down: 3 attempts of the first,
	// then 3 of each of the others; gone: each once.
	for i := range 5 {
		d := flaky.next(t)
		if i == 2 && !strings.Contains(string(d.body), `"task"`) {
			t.Fatalf("third attempt is not the first notification again: %s", d.body)
		}
	}
	flaky.none(t)
	for range 9 {
		down.next(t)
	}
	down.none(t)
	for range 3 {
		gone.next(t)
	}
	gone.none(t)
	// flaky: 2 retries, 3 delivered; down: 2 retries of each of 3, each
	// given up; gone: 3 given up at once.
	want := map[string]string{
		`caddy_a2a_push_deliveries_total{outcome="delivered"}`: "3",
		`caddy_a2a_push_deliveries_total{outcome="failed"}`:    "6",
		`caddy_a2a_push_deliveries_total{outcome="dropped"}`:   "0",
		`caddy_a2a_push_retries_total`:                         "8",
	}
	m := settledMetrics(t, want)
	for k, want := range want {
		if m[k] != want {
			t.Errorf("%s = %q, want %s", k, m[k], want)
		}
	}
}

// TestPushSigned: with signing_key every delivery carries a JWT a
// receiver verifies against the JWKS the mount serves: kid, iss (the
// mount's base URL), aud (the webhook), taskId and the body's SHA-256.
// A config with its own credentials keeps Authorization and gets the
// JWT in A2A-Notification-Signature.
func TestPushSigned(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(ec)
	keyFile := filepath.Join(t.TempDir(), "push.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	plain, withCreds := newWebhook(t), newWebhook(t)
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		push {
			allow 127.0.0.1
			signing_key {{.Key}}
		}
	}
}
`, map[string]any{"Agent": textAgent(t).URL(), "Key": keyFile})

	r, jwksBody := get(t, "GET", base+"/.well-known/jwks.json")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/jwk-set+json" || !strings.Contains(r.Header.Get("Cache-Control"), "public") {
		t.Fatalf("JWKS: %d %v %s", r.StatusCode, r.Header, jwksBody)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwksBody, &set); err != nil || len(set.Keys) != 1 || !set.Keys[0].IsPublic() {
		t.Fatalf("JWKS: %s", jwksBody)
	}
	_, cardBody := get(t, "GET", base+"/.well-known/agent-card.json")
	if !strings.Contains(string(cardBody), `"uri":"https://github.com/caddy-a2a/caddy-a2a/extensions/push-signature/v1"`) ||
		!strings.Contains(string(cardBody), `"jwks_path":"/.well-known/jwks.json"`) {
		t.Fatalf("card does not advertise the signatures: %s", cardBody)
	}

	for _, tc := range []struct {
		wh     *webhook
		auth   map[string]any
		header string
	}{
		{plain, nil, "Authorization"},
		{withCreds, map[string]any{"scheme": "Basic", "credentials": "dTpw"}, "A2A-Notification-Signature"},
	} {
		cfg := map[string]any{"url": tc.wh.URL()}
		if tc.auth != nil {
			cfg["authentication"] = tc.auth
		}
		var res struct {
			Task *wireTask `json:"task"`
		}
		call(t, base+"/a2a", "1.0", "SendMessage", map[string]any{"message": msg10("sig", "", ""),
			"configuration": map[string]any{"taskPushNotificationConfig": cfg}}).ok(t, &res)
		for range 4 {
			d := tc.wh.next(t)
			tok := d.header.Get(tc.header)
			if tc.header == "Authorization" {
				var ok bool
				if tok, ok = strings.CutPrefix(tok, "Bearer "); !ok {
					t.Fatalf("Authorization %q", d.header.Get("Authorization"))
				}
			} else if d.header.Get("Authorization") != "Basic dTpw" {
				t.Fatalf("the config's own Authorization is gone: %v", d.header)
			}
			parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
			if err != nil {
				t.Fatalf("%s: %v", tc.header, err)
			}
			keys := set.Key(parsed.Headers[0].KeyID)
			if len(keys) != 1 {
				t.Fatalf("kid %q not in the JWKS", parsed.Headers[0].KeyID)
			}
			if jku := parsed.Headers[0].ExtraHeaders["jku"]; jku != base+"/.well-known/jwks.json" {
				t.Fatalf("jku %v, want the JWKS the mount serves", jku)
			}
			var std jwt.Claims
			var extra struct {
				TaskID string `json:"taskId"`
				Body   string `json:"request_body_sha256"`
			}
			if err := parsed.Claims(keys[0].Key, &std, &extra); err != nil {
				t.Fatal(err)
			}
			if err := std.Validate(jwt.Expected{Issuer: base, AnyAudience: jwt.Audience{tc.wh.URL()}, Time: time.Now()}); err != nil {
				t.Fatalf("claims %+v: %v", std, err)
			}
			sum := sha256.Sum256(d.body)
			if extra.TaskID != res.Task.ID || extra.Body != hex.EncodeToString(sum[:]) || std.ID == "" {
				t.Fatalf("claims %+v %+v", std, extra)
			}
		}
	}
}

// TestPushSurvivesReload: deliveries waiting when the config is reloaded
// (the store unchanged) are still made after it.
func TestPushSurvivesReload(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	got := make(chan string, 100)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		// The first delivery is held until the reload is done, so the
		// rest wait in the queue across it.
		once.Do(func() { <-release })
		got <- string(b)
	}))
	defer hook.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	ag := textAgent(t)
	cfg := func(desc string) string {
		return strings.Replace(pushCfg, `description "An agent under test."`, `description "`+desc+`"`, 1)
	}
	load(t, cfg("before"), map[string]any{"Agent": ag.URL()})
	var res struct {
		Task *wireTask `json:"task"`
	}
	call(t, base+"/a2a", "1.0", "SendMessage", map[string]any{"message": msg10("reload", "", ""),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.URL}}}).ok(t, &res)
	load(t, cfg("after"), map[string]any{"Agent": ag.URL()})
	close(release)
	var bodies []string
	for len(bodies) < 4 {
		select {
		case b := <-got:
			bodies = append(bodies, b)
		case <-timeout():
			t.Fatalf("after the reload, deliveries %q", bodies)
		}
	}
	if !strings.Contains(bodies[3], "TASK_STATE_COMPLETED") || !strings.Contains(bodies[3], res.Task.ID) {
		t.Fatalf("the last delivery: %s", bodies[3])
	}
}

// TestPushGatewayCard: in front of an A2A agent, the card is the agent's
// with this mount's push capability and, when it signs, the
// push-signature extension.
func TestPushGatewayCard(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(ec)
	keyFile := filepath.Join(t.TempDir(), "push.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startPeer(t, protocol.V10, false)
	loadGateway(t, p, "push {\n\t\t\tallow 127.0.0.1\n\t\t\tsigning_key "+keyFile+"\n\t\t}")
	c := waitCard(t, "served", func(_ wireCard, r *http.Response) bool { return r.StatusCode == 200 })
	if !c.Capabilities.PushNotifications {
		t.Fatalf("gateway card capabilities %+v", c.Capabilities)
	}
	found := false
	for _, x := range c.Capabilities.Extensions {
		found = found || x.URI == "https://github.com/caddy-a2a/caddy-a2a/extensions/push-signature/v1"
	}
	if !found {
		t.Fatalf("gateway card extensions %+v", c.Capabilities.Extensions)
	}
}
