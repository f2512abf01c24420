package redisstore

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// A write tells whether the task has push configs: none before a config
// is put, then every write says so until the task's last here drops the
// hint.
func TestPushHints(t *testing.T) {
	url, _ := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix()})
	ctx := ctx5(t)
	v, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if s.MayHavePushConfigs("t1", false) {
		t.Fatal("a task without configs is hinted to have some")
	}
	if err := s.PutPushConfig(ctx, "alice", "t1", store.PushConfig{ID: "c", Data: []byte(`{}`)}, 10); err != nil {
		t.Fatal(err)
	}
	if v, _, err = s.Update(ctx, "t1", v, task("t1", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	if !s.MayHavePushConfigs("t1", false) || !s.MayHavePushConfigs("t1", false) {
		t.Fatal("the write after a config was put does not say so")
	}
	if _, _, err = s.Update(ctx, "t1", v, task("t1", protocol.StateCompleted)); err != nil {
		t.Fatal(err)
	}
	if !s.MayHavePushConfigs("t1", true) {
		t.Fatal("the final write does not say so")
	}
	if s.MayHavePushConfigs("t1", false) {
		t.Fatal("the hint outlived the task's last write")
	}
}
