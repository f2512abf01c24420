package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

func listIDs(t testing.TB, s store.Store, owner string, q store.ListQuery) ([]string, *store.ListPage) {
	t.Helper()
	page, err := s.List(ctxT(t), owner, q)
	if err != nil {
		t.Fatalf("List(%q, %+v): %v", owner, q, err)
	}
	ids := make([]string, len(page.Tasks))
	for i, task := range page.Tasks {
		ids[i] = task.ID
	}
	return ids, page
}

func testListOrder(t *testing.T, s store.Store) {
	// Timestamps out of creation order, with a tie between t2 and t4.
	for i, ts := range []time.Duration{3, 1, 5, 1, 4} {
		mustCreate(t, s, "alice", newTask(taskID(i), "c1", protocol.StateWorking, base.Add(ts*time.Second)))
	}
	mustCreate(t, s, "bob", newTask("bobs", "c1", protocol.StateWorking, base.Add(9*time.Second)))
	ids, page := listIDs(t, s, "alice", store.ListQuery{PageSize: 50})
	want := []string{taskID(2), taskID(4), taskID(0), taskID(3), taskID(1)}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("order %q, want %q (status timestamp desc, then id desc)", ids, want)
	}
	if page.TotalSize != 5 || page.NextPageToken != "" {
		t.Errorf("total %d next %q, want 5 and no next page", page.TotalSize, page.NextPageToken)
	}
	if ids, page := listIDs(t, s, "carol", store.ListQuery{PageSize: 50}); len(ids) != 0 || page.TotalSize != 0 {
		t.Errorf("unknown owner lists %q total %d", ids, page.TotalSize)
	}
}

func testListFilters(t *testing.T, s store.Store) {
	type spec struct {
		ctx   string
		state protocol.TaskState
		sec   int
	}
	specs := []spec{
		{"c1", protocol.StateWorking, 1},
		{"c1", protocol.StateCompleted, 2},
		{"c2", protocol.StateCompleted, 3},
		{"c2", protocol.StateInputRequired, 4},
		{"c1", protocol.StateCompleted, 5},
	}
	for i, sp := range specs {
		mustCreate(t, s, "alice", newTask(taskID(i), sp.ctx, sp.state, base.Add(time.Duration(sp.sec)*time.Second)))
	}
	mustCreate(t, s, "bob", newTask("bobs", "c1", protocol.StateCompleted, base.Add(9*time.Second)))
	tests := []struct {
		name string
		q    store.ListQuery
		want []string
	}{
		{"context", store.ListQuery{ContextID: "c1"}, []string{taskID(4), taskID(1), taskID(0)}},
		{"status", store.ListQuery{Status: protocol.StateCompleted}, []string{taskID(4), taskID(2), taskID(1)}},
		{"context and status", store.ListQuery{ContextID: "c2", Status: protocol.StateCompleted}, []string{taskID(2)}},
		{"after is inclusive", store.ListQuery{After: base.Add(3 * time.Second)}, []string{taskID(4), taskID(3), taskID(2)}},
		{"after and status", store.ListQuery{After: base.Add(2 * time.Second), Status: protocol.StateCompleted}, []string{taskID(4), taskID(2), taskID(1)}},
		{"no match", store.ListQuery{ContextID: "c3"}, []string{}},
		{"after everything", store.ListQuery{After: base.Add(time.Hour)}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.PageSize = 50
			ids, page := listIDs(t, s, "alice", tc.q)
			if !reflect.DeepEqual(ids, tc.want) || page.TotalSize != len(tc.want) {
				t.Errorf("got %q total %d, want %q", ids, page.TotalSize, tc.want)
			}
			// Paged by one, the same tasks come back and TotalSize counts all.
			tc.q.PageSize = 1
			var paged []string
			for range 10 {
				ids, page := listIDs(t, s, "alice", tc.q)
				if page.TotalSize != len(tc.want) {
					t.Fatalf("page total %d, want %d", page.TotalSize, len(tc.want))
				}
				paged = append(paged, ids...)
				if page.NextPageToken == "" {
					break
				}
				tc.q.PageToken = page.NextPageToken
			}
			if len(tc.want) > 0 && !reflect.DeepEqual(paged, tc.want) {
				t.Errorf("paged %q, want %q", paged, tc.want)
			}
		})
	}
}

func testListPaging(t *testing.T, s store.Store) {
	const n = 23
	var want []string
	for i := range n {
		// Every third task shares its timestamp with the previous one.
		sec := i - i/3
		mustCreate(t, s, "alice", newTask(taskID(i), "c1", protocol.StateWorking, base.Add(time.Duration(sec)*time.Second)))
	}
	want, _ = listIDs(t, s, "alice", store.ListQuery{PageSize: 100})
	if len(want) != n {
		t.Fatalf("one page holds %d tasks, want %d", len(want), n)
	}
	for _, size := range []int{1, 5, 7, 23, 24} {
		var got []string
		q := store.ListQuery{PageSize: size}
		for pages := 0; ; pages++ {
			if pages > n+1 {
				t.Fatalf("size %d: paging does not end", size)
			}
			ids, page := listIDs(t, s, "alice", q)
			if len(ids) > size || page.TotalSize != n {
				t.Fatalf("size %d: page of %d, total %d", size, len(ids), page.TotalSize)
			}
			if page.NextPageToken != "" && len(ids) != size {
				t.Fatalf("size %d: short page %d with a next token", size, len(ids))
			}
			got = append(got, ids...)
			if page.NextPageToken == "" {
				break
			}
			q.PageToken = page.NextPageToken
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("size %d: paged %q, want %q", size, got, want)
		}
	}
}

// testListPagingInserts adds tasks between pages, both newer than every
// listed task and older than the cursor: the tasks that existed at the
// start are each seen exactly once.
func testListPagingInserts(t *testing.T, s store.Store) {
	const n = 12
	orig := map[string]bool{}
	for i := range n {
		mustCreate(t, s, "alice", newTask(taskID(i), "c1", protocol.StateWorking, base.Add(time.Duration(10*i)*time.Second)))
		orig[taskID(i)] = true
	}
	seen := map[string]int{}
	q := store.ListQuery{PageSize: 4}
	for page := 0; ; page++ {
		if page > 2*n {
			t.Fatal("paging does not end")
		}
		ids, p := listIDs(t, s, "alice", q)
		for _, id := range ids {
			seen[id]++
		}
		if p.NextPageToken == "" {
			break
		}
		q.PageToken = p.NextPageToken
		// A newer task (before the cursor) and an older one (after it).
		mustCreate(t, s, "alice", newTask("new-"+taskID(page), "c1", protocol.StateWorking, base.Add(time.Hour)))
		mustCreate(t, s, "alice", newTask("old-"+taskID(page), "c1", protocol.StateWorking, base.Add(-time.Hour)))
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s listed %d times", id, c)
		}
	}
	for id := range orig {
		if seen[id] != 1 {
			t.Errorf("%s missed", id)
		}
	}
	for id := range seen {
		if id[:4] == "new-" {
			t.Errorf("%s, newer than the first page, shows up on a later page", id)
		}
	}
}

func testListReorder(t *testing.T, s store.Store) {
	v := mustCreate(t, s, "alice", newTask("a", "c1", protocol.StateWorking, base))
	mustCreate(t, s, "alice", newTask("b", "c1", protocol.StateWorking, base.Add(time.Second)))
	if _, _, err := s.Update(ctxT(t), "a", v, newTask("a", "c2", protocol.StateCompleted, base.Add(2*time.Second))); err != nil {
		t.Fatal(err)
	}
	ids, _ := listIDs(t, s, "alice", store.ListQuery{PageSize: 10})
	if !reflect.DeepEqual(ids, []string{"a", "b"}) {
		t.Errorf("after Update moved a's timestamp: %q, want [a b]", ids)
	}
	if ids, _ := listIDs(t, s, "alice", store.ListQuery{PageSize: 10, ContextID: "c2", Status: protocol.StateCompleted}); !reflect.DeepEqual(ids, []string{"a"}) {
		t.Errorf("filters see the updated context and state: %q", ids)
	}
}

func testListBadToken(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("a", "c1", protocol.StateWorking, base))
	for _, tok := range []string{"!!!", "bm90LWEtY3Vyc29y"} {
		if _, err := s.List(ctxT(t), "alice", store.ListQuery{PageSize: 10, PageToken: tok}); !errors.Is(err, store.ErrBadPageToken) {
			t.Errorf("List(token %q): %v, want ErrBadPageToken", tok, err)
		}
	}
}
