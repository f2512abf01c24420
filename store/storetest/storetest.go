// Package storetest is the conformance suite every store.Store
// implementation must pass (memory now, Redis later). It only relies on the
// Store contract: event ids and versions are opaque, page tokens are opaque,
// ties of the status timestamp are ordered by task id descending.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Run runs the suite. newStore returns a fresh, empty store for one subtest;
// the suite closes it when the subtest ends (an error from a second Close is
// ignored).
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"CreateGet", testCreateGet},
		{"CreateExists", testCreateExists},
		{"OwnerScope", testOwnerScope},
		{"LeavesValuesAlone", testLeavesValuesAlone},
		{"SharedReadsDuringUpdates", testSharedReads},
		{"UpdateVersions", testUpdateVersions},
		{"UpdateConflictRace", testUpdateConflictRace},
		{"EventsOrder", testEventsOrder},
		{"EventsAfterBadID", testEventsBadID},
		{"EventsWaitWakes", testEventsWaitWakes},
		{"EventsWaitCtx", testEventsWaitCtx},
		{"EventsConcurrentReaders", testConcurrentReaders},
		{"ListOrder", testListOrder},
		{"ListFilters", testListFilters},
		{"ListPaging", testListPaging},
		{"ListPagingWithInserts", testListPagingInserts},
		{"ListReorderOnUpdate", testListReorder},
		{"ListBadToken", testListBadToken},
		{"CancelBeforeAndAfter", testCancel},
		{"CancelCtx", testCancelCtx},
		{"CloseWakesWaiters", testCloseWakes},
		{"EventsReady", testEventsReady},
		{"EventsReadyClose", testEventsReadyClose},
		{"PushConfigs", testPushConfigs},
		{"ClaimDelivery", testClaimDelivery},
		{"SendsCreate", testSendsCreate},
		{"SendsUpdate", testSendsUpdate},
		{"SendsLapse", testSendsLapse},
		{"SendsRace", testSendsRace},
		{"RepliesClaim", testRepliesClaim},
		{"RepliesLapse", testRepliesLapse},
		{"RepliesRace", testRepliesRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

// base is the status timestamp the suite builds its tasks around.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ctxT is a context that ends with the test (and at the latest after 10s, so
// a hang fails instead of stalling the run).
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newTask builds a task with every kind of nested slice, so that a store
// writing into any of them shows up in the value tests.
func newTask(id, contextID string, state protocol.TaskState, ts time.Time) *protocol.Task {
	return &protocol.Task{
		ID:        id,
		ContextID: contextID,
		Status: protocol.TaskStatus{
			State:     state,
			Timestamp: ts,
			Message: &protocol.Message{
				ID: "st-" + id, Role: protocol.RoleAgent,
				Parts: []protocol.Part{{Kind: protocol.PartText, Text: "status of " + id}},
			},
		},
		History: []protocol.Message{{
			ID: "m-" + id, ContextID: contextID, TaskID: id, Role: protocol.RoleUser,
			Parts: []protocol.Part{
				{Kind: protocol.PartText, Text: "hello"},
				{Kind: protocol.PartData, Data: json.RawMessage(`{"k":[1,2]}`)},
				{Kind: protocol.PartFile, Raw: []byte("raw bytes"), MediaType: "application/octet-stream", Filename: "f.bin"},
			},
			Metadata:         json.RawMessage(`{"m":1}`),
			Extensions:       []string{"urn:ext"},
			ReferenceTaskIDs: []string{"other"},
		}},
		Artifacts: []protocol.Artifact{{
			ID: "a1", Name: "answer",
			Parts:      []protocol.Part{{Kind: protocol.PartText, Text: "42"}},
			Metadata:   json.RawMessage(`{"a":true}`),
			Extensions: []string{"urn:x"},
		}},
		Metadata: json.RawMessage(`{"t":"v"}`),
	}
}

// textEvent is an artifact chunk event carrying s.
func textEvent(taskID, s string) protocol.Event {
	return protocol.Event{Artifact: &protocol.ArtifactUpdate{
		TaskID: taskID,
		Artifact: protocol.Artifact{
			ID:    "main",
			Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}, {Kind: protocol.PartData, Data: json.RawMessage(`[1]`)}},
		},
		Append: true,
	}}
}

// statusEvent is a status update event.
func statusEvent(taskID string, st protocol.TaskState, final bool) protocol.Event {
	return protocol.Event{Status: &protocol.StatusUpdate{
		TaskID: taskID,
		Status: protocol.TaskStatus{State: st, Timestamp: base},
		Final:  final,
	}}
}

// eventText is the text a textEvent carries ("" otherwise).
func eventText(e protocol.Event) string {
	if e.Artifact == nil || len(e.Artifact.Artifact.Parts) == 0 {
		return ""
	}
	return e.Artifact.Artifact.Parts[0].Text
}

func mustCreate(t testing.TB, s store.Store, owner string, task *protocol.Task, evs ...protocol.Event) uint64 {
	t.Helper()
	v, err := s.Create(ctxT(t), owner, task, evs...)
	if err != nil {
		t.Fatalf("Create(%s): %v", task.ID, err)
	}
	return v
}

func mustGet(t testing.TB, s store.Store, owner, id string) *store.Record {
	t.Helper()
	r, err := s.Get(ctxT(t), owner, id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return r
}

func mustEvents(t testing.TB, s store.Store, id, after string) []store.StoredEvent {
	t.Helper()
	evs, err := s.Events(ctxT(t), id, after, false)
	if err != nil {
		t.Fatalf("Events(%s, %q): %v", id, after, err)
	}
	return evs
}

func texts(evs []store.StoredEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = eventText(e.Event)
	}
	return out
}

func taskID(i int) string { return fmt.Sprintf("task-%03d", i) }
