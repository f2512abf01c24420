package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// alice2Hash is another user named alice, of another site: password
// alice-two-pw (bcrypt cost 4).
const alice2Hash = "$2a$04$2hQjou4j.RRD1SGTR9GCoeUbbMDgaqMIClcj.Hh51QX9GrYh07zEu"

// twoSitesCfg is the setup: two sites with the same upstream and
// the default rpc_path, each with its own basic_auth user alice (other
// passwords). {{.Share1}} and {{.Share2}} are store blocks ("" for none).
const twoSitesCfg = `
http://:9080 {
	basic_auth /a2a {
		alice {{.Alice}}
	}
	a2a {
		upstream {{.Agent}}` + skillBlock + `
		{{.Share1}}
	}
}
http://:9081 {
	basic_auth /a2a {
		alice {{.Alice2}}
	}
	a2a {
		upstream {{.Agent}}` + skillBlock + `
		{{.Share2}}
	}
}
`

// twoSites expands twoSitesCfg for loadError (which takes no template).
func twoSites(agent, share1, share2 string) string {
	r := strings.NewReplacer("{{.Alice}}", aliceHash, "{{.Alice2}}", alice2Hash, "{{.Agent}}", agent,
		"{{.Share1}}", share1, "{{.Share2}}", share2)
	return r.Replace(twoSitesCfg)
}

// TestSharedScopeRefused: two mounts of one config that would hold one
// task store and one owner namespace without saying so are refused at
// load, with an error naming both and `share`; so are two that name one
// share with different store settings, and bad share names. The JSON
// config is checked the same way. The running config is left alone.
func TestSharedScopeRefused(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})

	jsonCfg := func(store1, store2 string) string {
		mount := func(store string) string {
			return fmt.Sprintf(`{"handle": [{"handler": "a2a", "upstream": {"url": %q}, "name": "N", "description": "D",
				"skills": [{"id": "s", "name": "S", "description": "S.", "tags": ["t"]}]%s}]}`, a.URL(), store)
		}
		return fmt.Sprintf(`{
	"admin": {"listen": "localhost:%d", "config": {"persist": false}},
	"apps": {"http": {"servers": {
		"one": {"listen": [":9080"], "automatic_https": {"disable": true}, "routes": [%s]},
		"two": {"listen": [":9081"], "automatic_https": {"disable": true}, "routes": [%s]}
	}}}
}`, adminPort, mount(store1), mount(store2))
	}

	for _, tt := range []struct {
		name, cfg string
		json      bool
		want      []string
	}{
		{
			name: "the issue's two sites",
			cfg:  twoSites(a.URL(), "", ""),
			want: []string{
				`the a2a mount "Test agent" in server srv0 (:9080) at rpc_path /a2a`,
				`the a2a mount "Test agent" in server srv1 (:9081) at rpc_path /a2a`,
				"would share one task store and one owner namespace (the same upstream " + a.URL(),
				"set `share <name>` in the store block of both: the same name to share their tasks, different names to keep them apart",
			},
		},
		{
			name: "one share, other store settings",
			cfg:  twoSites(a.URL(), "store memory {\n\t\t\tshare one\n\t\t}", "store memory {\n\t\t\tshare one\n\t\t\tmax_tasks 5\n\t\t}"),
			want: []string{
				`share "one": the a2a mount "Test agent" in server srv`,
				"use it with different store settings (the store block, or the limits the store enforces: max_tasks_per_owner, max_run_events); mounts sharing a store must configure it alike (or use different share names)",
			},
		},
		{
			name: "a share name out of its charset",
			cfg:  twoSites(a.URL(), "store memory {\n\t\t\tshare one/two\n\t\t}", ""),
			want: []string{`share: name "one/two" may only hold A-Z, a-z, 0-9, '.', '_' and '-'`},
		},
		{
			name: "JSON: two servers",
			cfg:  jsonCfg("", ""),
			json: true,
			want: []string{
				`the a2a mount "N" in server one (:9080) at rpc_path /a2a`,
				`the a2a mount "N" in server two (:9081) at rpc_path /a2a`,
				"set `share <name>`",
			},
		},
		{
			name: "JSON: one share, other store settings",
			cfg:  jsonCfg(`, "store": {"share": "s"}`, `, "store": {"share": "s", "ttl": "1m"}`),
			json: true,
			want: []string{`share "s": the a2a mount "N" in server`, "use it with different store settings"},
		},
		{
			name: "JSON: a share name too long",
			cfg:  jsonCfg(`, "store": {"share": "`+strings.Repeat("x", 65)+`"}`, `, "store": {"share": "b"}`),
			json: true,
			want: []string{"store: ", "a2a.stores.memory", `share: name "` + strings.Repeat("x", 65) + `" must be 1 to 64 characters`},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if tt.json {
				got = loadErrorAs(t, "application/json", tt.cfg)
			} else {
				got = loadError(t, tt.cfg)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("load error %q does not contain %q", got, w)
				}
			}
		})
	}
	if task := send10(t, base+"/a2a", msg10("still here", "", "")); task.text() != "Hello, still here" {
		t.Errorf("after refused loads: %q", task.text())
	}
}

// listIDs lists the caller's task ids at url (1.0 ListTasks).
func listIDs(t *testing.T, url string, opt reqOpt) []string {
	t.Helper()
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, url, "1.0", "ListTasks", map[string]any{}, opt).ok(t, &list)
	var ids []string
	for _, t := range list.Tasks {
		ids = append(ids, t.ID)
	}
	return ids
}

// TestSeparateShares: with `share one` and `share two`, alice of site 2
// is another caller than alice of site 1: her task is -32001 to get,
// cancel, continue and subscribe to, in both versions, and she lists
// nothing of it.
func TestSeparateShares(t *testing.T) {
	ask := askAgent(t)
	load(t, twoSitesCfg, map[string]any{"Agent": ask.URL(), "Alice": aliceHash, "Alice2": alice2Hash,
		"Share1": "store memory {\n\t\t\tshare one\n\t\t}", "Share2": "store memory {\n\t\t\tshare two\n\t\t}"})
	url1, url2 := base+"/a2a", base2+"/a2a"
	alice1, alice2 := withAuth("alice", "alice-pw"), withAuth("alice", "alice-two-pw")

	task := send10(t, url1, msg10("weather?", "", ""), alice1)
	if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("alice's task on site 1: %s", task.Status.State)
	}
	for _, c := range []struct{ version, method string }{
		{"1.0", "GetTask"}, {"", "tasks/get"}, {"1.0", "CancelTask"}, {"", "tasks/cancel"},
	} {
		call(t, url2, c.version, c.method, map[string]any{"id": task.ID}, alice2).fails(t, -32001)
	}
	call(t, url2, "1.0", "SendMessage", map[string]any{"message": msg10("Oslo", task.ID, "")}, alice2).fails(t, -32001)
	call(t, url2, "", "message/send", map[string]any{"message": msg03("Oslo", task.ID)}, alice2).fails(t, -32001)
	streamError(t, call(t, url2, "1.0", "SubscribeToTask", map[string]any{"id": task.ID}, alice2), -32001)
	s := openStream(t, url2, "", "tasks/resubscribe", map[string]any{"id": task.ID}, alice2)
	if f, _ := s.next(t); describe(t, f) != "error:-32001" {
		t.Errorf("tasks/resubscribe on site 2: %s", f.Data)
	}
	s.ended(t)
	if ids := listIDs(t, url2, alice2); len(ids) != 0 {
		t.Errorf("alice of site 2 lists %v", ids)
	}
	// The other way round too.
	other := send10(t, url2, msg10("weather?", "", ""), alice2)
	call(t, url1, "1.0", "GetTask", map[string]any{"id": other.ID}, alice1).fails(t, -32001)
	if ids := listIDs(t, url1, alice1); !slices.Equal(ids, []string{task.ID}) {
		t.Errorf("alice of site 1 lists %v", ids)
	}

	// Nothing of it touched alice's task on site 1; she continues it.
	if got := send10(t, url1, msg10("Oslo", task.ID, ""), alice1); got.Status.State != "TASK_STATE_COMPLETED" ||
		got.text() != "Sunny in Oslo" {
		t.Errorf("alice's continuation on site 1: %s %q", got.Status.State, got.text())
	}
}

// TestSameShare: two sites naming the same share do share (the explicit
// choice works): alice of either is one caller. A reload that changes
// nothing keeps the shared tasks; renaming the share starts a fresh
// store.
func TestSameShare(t *testing.T) {
	ask := askAgent(t)
	share := "store memory {\n\t\t\tshare team\n\t\t}"
	data := map[string]any{"Agent": ask.URL(), "Alice": aliceHash, "Alice2": alice2Hash, "Share1": share, "Share2": share}
	load(t, twoSitesCfg, data)
	url1, url2 := base+"/a2a", base2+"/a2a"
	alice1, alice2 := withAuth("alice", "alice-pw"), withAuth("alice", "alice-two-pw")

	task := send10(t, url1, msg10("weather?", "", ""), alice1)
	if got := getTask10(t, url2, task.ID, alice2); got.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("alice's task seen from site 2: %s", got.Status.State)
	}
	if ids := listIDs(t, url2, alice2); !slices.Equal(ids, []string{task.ID}) {
		t.Errorf("site 2 lists %v", ids)
	}

	// A reload that changes no store setting keeps them.
	data["Share2"] = share + "\n\t\tcard_max_age 1m"
	load(t, twoSitesCfg, data)
	if got := send10(t, url2, msg10("Oslo", task.ID, ""), alice2); got.text() != "Sunny in Oslo" {
		t.Errorf("continued on site 2 after a reload: %s %q", got.Status.State, got.text())
	}

	// Another share name is another store.
	data["Share1"] = "store memory {\n\t\t\tshare crew\n\t\t}"
	data["Share2"] = data["Share1"]
	load(t, twoSitesCfg, data)
	call(t, url1, "1.0", "GetTask", map[string]any{"id": task.ID}, alice1).fails(t, -32001)
}
