package integration

import (
	"testing"
)

// TestTwoMounts: one site, A2A 0.3 on /v03 and 1.0 on /v10, each with its
// own card; each refuses the other's dialect with -32009, and their tasks
// are apart.
func TestTwoMounts(t *testing.T) {
	a := textAgent(t)
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Agent}}
		spec_version 0.3
		card_path /v03/.well-known/agent-card.json
		rpc_path /v03`+skillBlock+`
	}
	a2a {
		upstream {{.Agent}}
		spec_version 1.0
		card_path /v10/.well-known/agent-card.json
		rpc_path /v10`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})

	_, c03 := fetchCard(t, base+"/v03/.well-known/agent-card.json")
	if len(c03.SupportedInterfaces) != 1 || c03.SupportedInterfaces[0].ProtocolVersion != "0.3" ||
		c03.SupportedInterfaces[0].URL != base+"/v03" || c03.URL != base+"/v03" {
		t.Errorf("0.3 card: url %q interfaces %+v", c03.URL, c03.SupportedInterfaces)
	}
	_, c10 := fetchCard(t, base+"/v10/.well-known/agent-card.json")
	if len(c10.SupportedInterfaces) != 1 || c10.SupportedInterfaces[0].ProtocolVersion != "1.0" ||
		c10.SupportedInterfaces[0].URL != base+"/v10" {
		t.Errorf("1.0 card: interfaces %+v", c10.SupportedInterfaces)
	}
	// Nothing answers the default card path in this site.
	if resp, body := get(t, "GET", base+"/.well-known/agent-card.json"); len(body) != 0 && resp.StatusCode == 200 {
		t.Errorf("default card path answered: %d %s", resp.StatusCode, body)
	}

	t03 := send03(t, base+"/v03", msg03("old", ""))
	if t03.Status.State != "completed" || t03.text() != "Hello, old" {
		t.Errorf("0.3 mount: %s %q", t03.Status.State, t03.text())
	}
	t10 := send10(t, base+"/v10", msg10("new", "", ""))
	if t10.Status.State != "TASK_STATE_COMPLETED" || t10.text() != "Hello, new" {
		t.Errorf("1.0 mount: %s %q", t10.Status.State, t10.text())
	}

	call(t, base+"/v03", "1.0", "GetTask", map[string]any{"id": t03.ID}).fails(t, -32009)
	call(t, base+"/v10", "", "tasks/get", map[string]any{"id": t10.ID}).fails(t, -32009)
	// Each mount keeps its own tasks.
	call(t, base+"/v10", "1.0", "GetTask", map[string]any{"id": t03.ID}).fails(t, -32001)
}
