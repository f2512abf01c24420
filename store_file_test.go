package caddya2a

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/filestore"
)

// fileModule is a file store module of raw settings, provisioned as the
// handler loads it.
func fileModule(t *testing.T, raw string) *FileStore {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	mod, err := ctx.LoadModuleByID("a2a.stores.file", json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return mod.(*FileStore)
}

// A reload that changes ttl opens the new store before the old config
// lets go of its own: two backends on one directory at once. The file
// is opened once (a second open in the process would wait for the
// first's lock and fail), so both see the same tasks, and the tasks
// outlive the last config.
func TestFileStoreReload(t *testing.T) {
	dir, _ := json.Marshal(t.TempDir())
	scope := "test|" + t.Name()
	bg := context.Background()
	old, kOld, err := takeBackend(fileModule(t, `{"dir":`+string(dir)+`,"ttl":3600000000000}`), StoreEnv{}, scope)
	if err != nil {
		t.Fatal(err)
	}
	task := &protocol.Task{ID: "t1", ContextID: "c1", Status: protocol.TaskStatus{State: protocol.StateCompleted}}
	if _, err := old.Store().Create(bg, "alice", task); err != nil {
		t.Fatal(err)
	}
	cur, kCur, err := takeBackend(fileModule(t, `{"dir":`+string(dir)+`,"ttl":7200000000000}`), StoreEnv{}, scope)
	if err != nil {
		t.Fatalf("the reload's store: %v", err)
	}
	if kCur == kOld || cur == old {
		t.Fatal("another ttl, the same backend")
	}
	if p1, p2 := old.Store().(*filestore.Store).Path(), cur.Store().(*filestore.Store).Path(); p1 != p2 {
		t.Fatalf("one directory, two files: %s, %s", p1, p2)
	}
	if _, err := backends.Delete(kOld); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Store().Get(bg, "alice", "t1"); err != nil {
		t.Fatalf("the task through the reload's store: %v", err)
	}
	if _, err := backends.Delete(kCur); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Store().Get(bg, "alice", "t1"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("store after the last release: %v, want ErrClosed", err)
	}

	// The next Caddy on the directory reads it back.
	again, kAgain, err := takeBackend(fileModule(t, `{"dir":`+string(dir)+`}`), StoreEnv{}, scope)
	if err != nil {
		t.Fatal(err)
	}
	defer backends.Delete(kAgain)
	if _, err := again.Store().Get(bg, "alice", "t1"); err != nil {
		t.Fatalf("the task after the store was closed and opened again: %v", err)
	}
}

// Mounts of one directory keep their scopes apart: another upstream's
// mount does not see the task, one with the same share does.
func TestFileStoreScopes(t *testing.T) {
	dir, _ := json.Marshal(t.TempDir())
	bg := context.Background()
	take := func(raw, scope string) store.Store {
		b, k, err := takeBackend(fileModule(t, raw), StoreEnv{}, scope)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = backends.Delete(k) })
		return b.Store()
	}
	a := take(`{"dir":`+string(dir)+`}`, "http://a|/a2a")
	b := take(`{"dir":`+string(dir)+`}`, "http://b|/a2a")
	sa := take(`{"dir":`+string(dir)+`,"share":"team"}`, "http://a|/a2a")
	sb := take(`{"dir":`+string(dir)+`,"share":"team","ttl":60000000000}`, "http://b|/a2a")
	for _, s := range []store.Store{a, sa} {
		if _, err := s.Create(bg, "alice", &protocol.Task{ID: "t1", Status: protocol.TaskStatus{State: protocol.StateWorking}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Get(bg, "alice", "t1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another mount's scope reads the task: %v", err)
	}
	if _, err := sb.Get(bg, "alice", "t1"); err != nil {
		t.Errorf("a mount of the same share does not read it: %v", err)
	}
}

// The directory defaults to Caddy's data directory + /a2a and is made
// absolute; global placeholders are resolved; defaults are in the key.
func TestFileStoreProvision(t *testing.T) {
	m := fileModule(t, `{}`)
	want := filepath.Join(caddy.AppDataDir(), "a2a")
	if m.dir != want {
		t.Errorf("default dir %q, want %q", m.dir, want)
	}
	if got := fileModule(t, `{"ttl":3600000000000,"idle_ttl":86400000000000,"max_bytes":1073741824}`).StoreKey(); got != m.StoreKey() {
		t.Errorf("explicit defaults %q, omitted %q: two stores", got, m.StoreKey())
	}
	t.Setenv("A2A_TEST_DIR", "/srv/a2a")
	if m := fileModule(t, `{"dir":"{env.A2A_TEST_DIR}/tasks"}`); m.dir != "/srv/a2a/tasks" {
		t.Errorf("placeholder dir resolved to %q", m.dir)
	}
	for raw, want := range map[string]string{
		`{"max_bytes":-1}`:            "max_bytes must be positive",
		`{"max_bytes":2199023255552}`: "max_bytes must be at most 1TiB",
		`{"share":"a b"}`:             `share: name "a b" may only hold`,
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		_, err := ctx.LoadModuleByID("a2a.stores.file", json.RawMessage(raw))
		cancel()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}
