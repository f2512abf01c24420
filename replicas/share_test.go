package replicas

import (
	"fmt"
	"testing"
)

// Two sites of one Caddy on one Redis and the default key_prefix, with
// different share names: site 2's alice never reads, lists or cancels
// site 1's alice's task.
func TestReplicasSharesSeparate(t *testing.T) {
	ag := startAgent(t)
	redis := startRedis(t)
	site := func(port int, share string) string {
		return fmt.Sprintf(`http://:%d {
	a2a {
		upstream %s
		name "Site %s"
		description "One of two sites."
		skill s {
			name "S"
			description "S."
			tags t
		}
		owner {http.request.header.X-Caller}
		store redis %s {
			share %s
		}
	}
}
`, port, ag.URL(), share, redis, share)
	}
	cfg := "{\n\tadmin off\n\tauto_https off\n\tpersist_config off\n}\n" + site(portA, "site1") + site(portB, "site2")
	r := runReplica(t, "sites", portA, cfg)
	waitPort(t, portB, "site 2", &r.out)
	one := "http://127.0.0.1:" + fmt.Sprint(portA) + "/a2a"
	two := "http://127.0.0.1:" + fmt.Sprint(portB) + "/a2a"
	tk := send(t, one, "alice", message("slow", ""), true)
	waitState(t, one, "alice", tk.ID, "TASK_STATE_WORKING")
	if got, e := getTask(t, two, "alice", tk.ID); e == nil || e.Code != -32001 {
		t.Fatalf("site 2 reads site 1's task: %+v %+v", got, e)
	}
	var list struct {
		Tasks []task `json:"tasks"`
	}
	if e := call(t, two, "alice", "ListTasks", map[string]any{}, &list); e != nil || len(list.Tasks) != 0 {
		t.Fatalf("site 2 lists %+v %+v", list, e)
	}
	var canceled task
	if e := call(t, two, "alice", "CancelTask", map[string]any{"id": tk.ID}, &canceled); e == nil || e.Code != -32001 {
		t.Fatalf("site 2 cancels site 1's task: %+v %+v", canceled, e)
	}
	if got := waitState(t, one, "alice", tk.ID, "TASK_STATE_WORKING"); got.ID != tk.ID {
		t.Fatalf("site 1's task after site 2's cancel: %+v", got)
	}
	if e := call(t, one, "alice", "ListTasks", map[string]any{}, &list); e != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != tk.ID {
		t.Fatalf("site 1 lists %+v %+v", list, e)
	}
}
