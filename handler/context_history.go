package handler

import (
	"context"
	"slices"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// contextPage is how many tasks one store read of a context's earlier
// tasks asks for.
const contextPage = 50

// contextHistory is the conversation of the context's tasks before task,
// oldest first, the newest max messages of it: each task's history, then
// its artifacts as one agent message (a chat model's answers are its
// tasks' artifacts). Only owner's tasks are read, as ListTasks reads
// them. A store error gives what was read before it: the run goes on
// with less of the conversation rather than failing.
func contextHistory(ctx context.Context, st store.Store, owner string, task *protocol.Task, max int) []protocol.Message {
	if task.ContextID == "" || max <= 0 {
		return nil
	}
	var newestFirst [][]protocol.Message
	n, token := 0, ""
	for n < max {
		page, err := st.List(ctx, owner, store.ListQuery{ContextID: task.ContextID, PageSize: contextPage, PageToken: token,
			View: store.View{History: max}})
		if err != nil || page == nil {
			break
		}
		for _, t := range page.Tasks {
			if t.ID == task.ID || n >= max {
				continue
			}
			msgs := taskConversation(t)
			newestFirst = append(newestFirst, msgs)
			n += len(msgs)
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	var out []protocol.Message
	for _, msgs := range slices.Backward(newestFirst) {
		out = append(out, msgs...)
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// taskConversation is one task as conversation turns: its history, then
// its artifacts' parts as one agent message.
func taskConversation(t *protocol.Task) []protocol.Message {
	msgs := slices.Clone(t.History)
	var parts []protocol.Part
	for _, a := range t.Artifacts {
		parts = append(parts, a.Parts...)
	}
	if len(parts) > 0 {
		msgs = append(msgs, protocol.Message{Role: protocol.RoleAgent, ContextID: t.ContextID, TaskID: t.ID, Parts: parts})
	}
	return msgs
}
