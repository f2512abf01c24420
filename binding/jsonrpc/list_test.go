package jsonrpc

import (
	"fmt"
	"testing"
)

func TestListTasks(t *testing.T) {
	h := newHarness(t, scriptAgent(text("out")))
	var aliceIDs []string
	for i := range 5 {
		r := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", fmt.Sprint("a", i), "", "")})
		aliceIDs = append(aliceIDs, str(t, r, "result", "task", "id"))
	}
	h.rpc(req{version: "1.0", owner: "bob", body: sendV10("SendMessage", "b", "", "")})
	h.rpc(req{version: "1.0", body: sendV10("SendMessage", "anon", "", "")})

	list := func(owner, params string) map[string]any {
		return h.rpc(req{version: "1.0", owner: owner, body: rpcCall("ListTasks", params)})
	}

	t.Run("owner scoped and paged", func(t *testing.T) {
		seen := map[string]bool{}
		token := ""
		pages := 0
		for {
			p := `{"pageSize":2`
			if token != "" {
				p += `,"pageToken":"` + token + `"`
			}
			r := list("alice", p+`}`)
			pages++
			if num(t, r, "result", "pageSize") != 2 || num(t, r, "result", "totalSize") != 5 {
				t.Fatalf("page %v", r["result"])
			}
			for i, task := range at(t, r, "result", "tasks").([]any) {
				id := str(t, task, "id")
				if seen[id] {
					t.Fatalf("task %s listed twice", id)
				}
				seen[id] = true
				if has(task, "artifacts") {
					t.Fatalf("artifacts listed without includeArtifacts (task %d)", i)
				}
			}
			token = str(t, r, "result", "nextPageToken")
			if token == "" {
				break
			}
		}
		if pages != 3 || len(seen) != 5 {
			t.Fatalf("%d pages, %d tasks", pages, len(seen))
		}
		for _, id := range aliceIDs {
			if !seen[id] {
				t.Fatalf("alice's task %s not listed", id)
			}
		}
	})
	t.Run("includeArtifacts and historyLength", func(t *testing.T) {
		r := list("alice", `{"includeArtifacts":true,"historyLength":0}`)
		task := at(t, r, "result", "tasks", 0)
		if str(t, task, "artifacts", 0, "parts", 0, "text") != "out" {
			t.Fatalf("artifacts %v", task)
		}
		if has(task, "history") {
			t.Fatalf("historyLength 0 listed history")
		}
	})
	t.Run("anonymous sees nothing", func(t *testing.T) {
		r := list("", `{"pageSize":10}`)
		if n := len(at(t, r, "result", "tasks").([]any)); n != 0 {
			t.Fatalf("anonymous caller listed %d tasks", n)
		}
		if num(t, r, "result", "pageSize") != 10 || str(t, r, "result", "nextPageToken") != "" {
			t.Fatalf("result %v", r["result"])
		}
	})
	t.Run("bad page token", func(t *testing.T) {
		wantError(t, list("alice", `{"pageToken":"garbage!"}`), -32602, 3, true, "")
	})
	t.Run("bob", func(t *testing.T) {
		r := list("bob", `{}`)
		if n := len(at(t, r, "result", "tasks").([]any)); n != 1 {
			t.Fatalf("bob lists %d tasks", n)
		}
	})
}
