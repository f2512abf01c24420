package cli

import (
	"context"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// maxPages bounds how many pages of ListTasks one command reads.
const maxPages = 100

// TasksOptions filter the task list.
type TasksOptions struct {
	// ContextID lists one conversation's tasks; State tasks in one state
	// (either spelling: "working", "TASK_STATE_WORKING").
	ContextID, State string
}

// Tasks lists the caller's tasks (ListTasks, every page, newest first as
// the server sends them): id, state, when the status last changed and
// the context; with JSON each page's raw response.
func Tasks(ctx context.Context, o *Options, given string, to TasksOptions) int {
	req := &a2a.ListTasksRequest{ContextID: to.ContextID}
	if to.State != "" {
		st, err := parseState(to.State)
		if err != nil {
			return commandFailed(o, "tasks", err)
		}
		req.Status = st
	}
	c, w, err := dial(ctx, o, given)
	if err != nil {
		return commandFailed(o, "tasks", err)
	}
	defer c.Destroy()
	n := 0
	for page := 0; page < maxPages; page++ {
		res, err := c.ListTasks(ctx, req)
		if err != nil {
			return listFailed(o, w, err)
		}
		for _, t := range res.Tasks {
			if !o.JSON {
				printTaskLine(o, t)
			}
			n++
		}
		if res.NextPageToken == "" {
			break
		}
		req.PageToken = res.NextPageToken
	}
	if n == 0 && !o.JSON {
		o.errorf("no tasks\n")
	}
	return ExitOK
}

// listFailed is callFailed for ListTasks, which a2a-go's 0.3 JSON-RPC
// client refuses without a call ("this operation is not supported"):
// 0.3 has no such method, and a person should be told so.
func listFailed(o *Options, w *wire, err error) int {
	if _, _, answered := wireError(w.last()); answered || w.bound() != nil || !errors.Is(err, a2a.ErrUnsupportedOperation) {
		return callFailed(o, w, err)
	}
	if o.Version == "0.3" {
		o.errorf("error: ListTasks exists only in A2A 1.0, not in 0.3 (--version 0.3)\n")
	} else {
		o.errorf("error: ListTasks exists only in A2A 1.0, and this server speaks 0.3\n")
	}
	return ExitFailed
}

func printTaskLine(o *Options, t *a2a.Task) {
	when := "-"
	if ts := t.Status.Timestamp; ts != nil {
		when = ts.UTC().Format(time.RFC3339)
	}
	o.printf("%s  %-14s  %s  context %s\n", t.ID, stateName(t.Status.State), when, t.ContextID)
}

// Cancel asks the server to cancel a task and prints the state it
// reports.
func Cancel(ctx context.Context, o *Options, given, taskID string) int {
	c, w, err := dial(ctx, o, given)
	if err != nil {
		return commandFailed(o, "cancel", err)
	}
	defer c.Destroy()
	t, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)})
	if err != nil {
		return callFailed(o, w, err)
	}
	if !o.JSON {
		printTaskLine(o, t)
	}
	return ExitOK
}
