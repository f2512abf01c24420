package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// overlapHint ends every refusal of two mounts on one path.
const overlapHint = "; give each mount of a site its own card_path, rpc_path, rest_path, inspector path and at most one of them grpc, " +
	"or keep them apart with a different matcher on each a2a line (a2a @name {…}) or a handle block each"

// twoMounts is a site of two a2a blocks, each with the given settings.
func twoMounts(agent, first, second string) string {
	mount := func(settings string) string {
		return "\ta2a {\n\t\tupstream " + agent + skillBlock + "\n\t\t" + settings + "\n\t}\n"
	}
	return "http://:9080 {\n" + mount(first) + mount(second) + "}\n"
}

// TestOverlappingMountsRefused: two a2a blocks of one site that answer
// one path (the same card_path, rpc_path in either of its forms, rest_path
// prefixes that collide, the same inspector path, gRPC twice) are refused
// at load, naming both mounts and the path: the second would never
// answer there. The running config is left alone.
func TestOverlappingMountsRefused(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	mount := func(rpcPath string) string {
		return `the a2a mount "Test agent" in server srv0 (:9080) at rpc_path ` + rpcPath
	}
	for _, tt := range []struct {
		name, first, second string
		want                string
	}{
		{name: "the default card_path", first: "rpc_path /one", second: "rpc_path /two",
			want: mount("/two") + " would never answer /.well-known/agent-card.json (its card_path): " + mount("/one") +
				", before it in the same site, answers there (its card_path)"},
		{name: "rpc_path with a trailing slash", first: "rpc_path /a2a\n\t\tcard_path /one.json", second: "rpc_path /a2a/\n\t\tcard_path /two.json",
			want: mount("/a2a/") + " would never answer /a2a (its rpc_path): " + mount("/a2a") +
				", before it in the same site, answers there (its rpc_path)"},
		{name: "rest_path prefixes", first: "rest_path /api\n\t\tcard_path /one.json\n\t\trpc_path /one",
			second: "rest_path /api/two\n\t\tcard_path /two.json\n\t\trpc_path /two",
			want: mount("/two") + " would never answer the paths under /api/two/ (its rest_path): " + mount("/one") +
				", before it in the same site, answers there (its rest_path)"},
		{name: "rpc_path under rest_path", first: "rest_path /\n\t\tcard_path /one.json\n\t\trpc_path /one",
			second: "card_path /two.json\n\t\trpc_path /two",
			want: mount("/two") + " would never answer /two.json (its card_path): " + mount("/one") +
				", before it in the same site, answers there (its rest_path)"},
		{name: "the inspector path", first: "rpc_path /one\n\t\tcard_path /one.json\n\t\tinspector /inspect",
			second: "rpc_path /two\n\t\tcard_path /two.json\n\t\tinspector /inspect",
			want: mount("/two") + " would never answer /inspect (its inspector): " + mount("/one") +
				", before it in the same site, answers there (its inspector)"},
		{name: "gRPC twice", first: "rpc_path /one\n\t\tcard_path /one.json\n\t\tgrpc on",
			second: "rpc_path /two\n\t\tcard_path /two.json\n\t\tgrpc on",
			want: mount("/two") + " would never answer the paths under /lf.a2a.v1.A2AService/ (its grpc): " + mount("/one") +
				", before it in the same site, answers there (its grpc)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := loadError(t, twoMounts(a.URL(), tt.first, tt.second))
			if want := tt.want + overlapHint; !strings.HasSuffix(got, ": "+want) {
				t.Errorf("load error\n%s\nwant it to end with\n%s", got, want)
			}
		})
	}
	// The same matcher on both a2a lines keeps nothing apart.
	sameMatcher := "http://:9080 {\n\t@local host localhost\n" + matchedMount("@local", a.URL(), "rpc_path /one") +
		matchedMount("@local", a.URL(), "rpc_path /two") + "}\n"
	want := mount("/two") + " would never answer /.well-known/agent-card.json (its card_path): " + mount("/one") +
		", before it in the same site, answers there (its card_path)" + overlapHint
	if got := loadError(t, sameMatcher); !strings.HasSuffix(got, ": "+want) {
		t.Errorf("same matcher: load error\n%s\nwant it to end with\n%s", got, want)
	}
	if task := send10(t, base+"/a2a", msg10("still here", "", "")); task.text() != "Hello, still here" {
		t.Errorf("after refused loads: %q", task.text())
	}
}

// matchedMount is an a2a block with a matcher on its directive line.
func matchedMount(matcher, agent, settings string) string {
	return "\ta2a " + matcher + " {\n\t\tupstream " + agent + skillBlock + "\n\t\t" + settings + "\n\t}\n"
}

// TestSeparateMountsLoad: two a2a blocks of one site on paths of their
// own load and both answer; so do two sites of one server (one listener,
// two hosts) with the same paths, the same paths in two handle blocks, and
// two a2a blocks of one site that different matchers keep apart.
func TestSeparateMountsLoad(t *testing.T) {
	a, b := textAgent(t), textAgent(t)
	load(t, twoMounts(a.URL(), "rpc_path /one\n\t\tcard_path /one.json\n\t\trest_path /one/rest",
		"rpc_path /two\n\t\tcard_path /two.json\n\t\trest_path /two/rest"), nil)
	for _, p := range []string{"/one", "/two"} {
		if task := send10(t, base+p, msg10("hi", "", "")); task.text() != "Hello, hi" {
			t.Errorf("%s: %q", p, task.text())
		}
	}

	site := func(host, agent string) string {
		return "http://" + host + ":9080 {\n\ta2a {\n\t\tupstream " + agent + skillBlock + "\n\t}\n}\n"
	}
	load(t, site("localhost", a.URL())+site("127.0.0.1", b.URL()), nil)
	for _, host := range []string{"localhost", "127.0.0.1"} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+host+":9080/.well-known/agent-card.json", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: card %d", host, resp.StatusCode)
		}
	}

	handle := func(prefix, agent string) string {
		return "\thandle_path " + prefix + "/* {\n\t\ta2a {\n\t\t\tupstream " + agent + skillBlock + "\n\t\t}\n\t}\n"
	}
	load(t, "http://:9080 {\n"+handle("/x", a.URL())+handle("/y", b.URL())+"}\n", nil)
	for _, p := range []string{"/x", "/y"} {
		if task := send10(t, base+p+"/a2a", msg10("hi", "", "")); task.text() != "Hello, hi" {
			t.Errorf("%s: %q", p, task.text())
		}
	}

	// Matchers on the a2a lines: each host reaches its own agent.
	prefixed := func(prefix string) *agent {
		return newAgent(t, func(w http.ResponseWriter, _ *http.Request, c agentCall) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, prefix+c.inputText())
		})
	}
	one, two := prefixed("ONE "), prefixed("TWO ")
	load(t, "http://:9080 {\n\t@one host localhost\n\t@two host 127.0.0.1\n"+
		matchedMount("@one", one.URL(), "")+matchedMount("@two", two.URL(), "")+"}\n", nil)
	for host, want := range map[string]string{"localhost": "ONE hi", "127.0.0.1": "TWO hi"} {
		if task := send10(t, "http://"+host+":9080/a2a", msg10("hi", "", "")); task.text() != want {
			t.Errorf("%s: %q, want %q", host, task.text(), want)
		}
	}
}
