package handlertest

import (
	"slices"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Another owner's task is a task that does not exist: GetTask, CancelTask
// and SubscribeToTask answer -32001 for it exactly as for an unknown id,
// and the task is left as it was.
func testOwnerScope(t *testing.T, e *env) {
	e.agent.PlayAlways(Status(protocol.StateInputRequired, "?"))
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), true))
	for _, tc := range []struct{ name, owner, id string }{
		{"another owner", bob, task.ID},
		{"anonymous", "", task.ID},
		{"unknown id", alice, "no-such-task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, perr := e.c.GetTask(e.ctx(), tc.owner, &protocol.GetTaskParams{ID: tc.id})
			wantError(t, "GetTask", perr, protocol.CodeTaskNotFound)
			_, perr = e.c.CancelTask(e.ctx(), tc.owner, tc.id)
			wantError(t, "CancelTask", perr, protocol.CodeTaskNotFound)
			_, perr = e.c.Subscribe(e.ctx(), tc.owner, tc.id, "")
			wantError(t, "Subscribe", perr, protocol.CodeTaskNotFound)
		})
	}
	if got := e.getTask(alice, task.ID); got.Status.State != protocol.StateInputRequired {
		t.Fatalf("the owner's task is %s after the others' calls", got.Status.State)
	}
}

// ListTasks lists the caller's own tasks only, in pages whose tokens lead
// through all of them once; artifacts only when asked for, a status
// filter, and nothing for an anonymous caller.
func testListTasks(t *testing.T, e *env) {
	e.agent.Play(askOrAnswer)
	var mine []string
	for _, id := range []string{"a-1", "a-2", "a-3"} {
		mine = append(mine, e.sendTask(alice, sendParams(userMessage(id, "hi"), true)).ID)
	}
	asking := e.sendTask(alice, sendParams(userMessage("a-4", "ask"), true)).ID
	mine = append(mine, asking)
	bobs := e.sendTask(bob, sendParams(userMessage("b-1", "hi"), true)).ID
	e.sendTask("", sendParams(userMessage("anon", "hi"), true))

	list := func(t *testing.T, owner string, p protocol.ListTasksParams) *protocol.ListTasksResult {
		t.Helper()
		res, perr := e.c.ListTasks(e.ctx(), owner, &p)
		if perr != nil {
			t.Fatalf("ListTasks as %q: %v", owner, perr)
		}
		return res
	}
	t.Run("paged", func(t *testing.T) {
		var seen []string
		token := ""
		for page := 1; ; page++ {
			res := list(t, alice, protocol.ListTasksParams{PageSize: 3, PageToken: token})
			if res.PageSize != 3 || res.TotalSize != 4 {
				t.Fatalf("page %d: pageSize %d totalSize %d, want 3 and 4", page, res.PageSize, res.TotalSize)
			}
			if want := []int{3, 1}[min(page, 2)-1]; len(res.Tasks) != want {
				t.Fatalf("page %d holds %d tasks, want %d", page, len(res.Tasks), want)
			}
			for _, task := range res.Tasks {
				if len(task.Artifacts) != 0 {
					t.Fatalf("task %s listed with artifacts, not asked for", task.ID)
				}
			}
			seen = append(seen, ids(res.Tasks)...)
			if token = res.NextPageToken; token == "" {
				if page != 2 {
					t.Fatalf("%d pages, want 2", page)
				}
				break
			}
		}
		slices.Sort(seen)
		slices.Sort(mine)
		if !slices.Equal(seen, mine) {
			t.Fatalf("alice's pages hold %v, want her tasks %v", seen, mine)
		}
	})
	t.Run("artifacts and no history", func(t *testing.T) {
		none := 0
		res := list(t, alice, protocol.ListTasksParams{PageSize: 1, Status: protocol.StateCompleted, IncludeArtifacts: true, HistoryLength: &none})
		if len(res.Tasks) != 1 || res.TotalSize != 3 {
			t.Fatalf("%d tasks of %d, want 1 of alice's 3 completed", len(res.Tasks), res.TotalSize)
		}
		task := res.Tasks[0]
		if len(task.Artifacts) != 1 || partsText(task.Artifacts[0].Parts) != "ok" || len(task.History) != 0 {
			t.Fatalf("task listed with artifacts %+v and history %+v", task.Artifacts, task.History)
		}
	})
	t.Run("status filter", func(t *testing.T) {
		res := list(t, alice, protocol.ListTasksParams{PageSize: 10, Status: protocol.StateInputRequired})
		if got := ids(res.Tasks); len(got) != 1 || got[0] != asking {
			t.Fatalf("input-required lists %v, want %s", got, asking)
		}
	})
	t.Run("another owner", func(t *testing.T) {
		if got := ids(list(t, bob, protocol.ListTasksParams{PageSize: 10}).Tasks); len(got) != 1 || got[0] != bobs {
			t.Fatalf("bob lists %v, want his %s", got, bobs)
		}
	})
	t.Run("anonymous", func(t *testing.T) {
		res := list(t, "", protocol.ListTasksParams{PageSize: 10})
		if len(res.Tasks) != 0 || res.NextPageToken != "" || res.PageSize != 10 {
			t.Fatalf("an anonymous caller lists %v (pageSize %d, token %q)", ids(res.Tasks), res.PageSize, res.NextPageToken)
		}
	})
	t.Run("bad page token", func(t *testing.T) {
		_, perr := e.c.ListTasks(e.ctx(), alice, &protocol.ListTasksParams{PageSize: 10, PageToken: "garbage!"})
		wantError(t, "ListTasks", perr, protocol.CodeInvalidParams)
	})
}

// Contexts belong to their owner: two owners naming the same contextId
// keep it on their tasks, but the agent is told a context id of each
// owner's own (never the caller's), the same for every turn of one
// owner's context; and each lists only its own tasks of it.
func testContextIDs(t *testing.T, e *env) {
	e.agent.PlayAlways(Text("ok"))
	send := func(owner, id string) (*protocol.Task, *upstream.RunRequest) {
		m := userMessage(id, "hi")
		m.ContextID = "ctx-1"
		task := e.sendTask(owner, sendParams(m, true))
		if task.ContextID != "ctx-1" || task.History[0].ContextID != "ctx-1" {
			t.Fatalf("the caller's contextId was not kept: %q, history %q", task.ContextID, task.History[0].ContextID)
		}
		return task, e.agent.Request(t)
	}
	a1, ra1 := send(alice, "a-1")
	a2, ra2 := send(alice, "a-2")
	b1, rb1 := send(bob, "b-1")
	if want := AgentContextID(e.key, alice, "ctx-1"); ra1.ContextID != want || ra2.ContextID != want {
		t.Fatalf("alice's turns were told %s and %s, want %s", ra1.ContextID, ra2.ContextID, want)
	}
	if want := AgentContextID(e.key, bob, "ctx-1"); rb1.ContextID != want || want == ra1.ContextID {
		t.Fatalf("bob's turn was told %s, want %s (alice's %s)", rb1.ContextID, want, ra1.ContextID)
	}
	for _, tc := range []struct {
		owner string
		want  []string
	}{
		{alice, []string{a1.ID, a2.ID}},
		{bob, []string{b1.ID}},
	} {
		res, perr := e.c.ListTasks(e.ctx(), tc.owner, &protocol.ListTasksParams{PageSize: 10, ContextID: "ctx-1"})
		if perr != nil {
			t.Fatal(perr)
		}
		got := ids(res.Tasks)
		slices.Sort(got)
		slices.Sort(tc.want)
		if !slices.Equal(got, tc.want) {
			t.Fatalf("%s's ctx-1 lists %v, want %v", tc.owner, got, tc.want)
		}
	}
}
