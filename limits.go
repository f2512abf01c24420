package caddya2a

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddyserver/caddy/v2"
)

// The limits block as the packages below read it: protocol's request
// limits, the service's options and the store's bounds.

// check refuses negative limits, limits past maxLimitSize and a depth no
// request could pass.
func (l *Limits) check() error {
	if l == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    int
		size bool
	}{
		{protocol.LimitMaxParts, l.MaxParts, false},
		{protocol.LimitMaxTextBytes, l.MaxTextSize, true},
		{protocol.LimitMaxFileBytes, l.MaxFileSize, true},
		{protocol.LimitMaxMetadataBytes, l.MaxMetadataSize, true},
		{protocol.LimitMaxJSONDepth, l.MaxJSONDepth, false},
		{"max_history", l.MaxHistory, false},
		{"max_history_size", l.MaxHistorySize, true},
		{"max_task_output", l.MaxTaskOutput, true},
		{"max_run_events", l.MaxRunEvents, false},
		{"max_artifacts", l.MaxArtifacts, false},
		{"max_tasks_per_owner", l.MaxTasksPerOwner, false},
		{"max_runs_per_owner", l.MaxRunsPerOwner, false},
	} {
		switch {
		case f.v < 0:
			return errors.New("limits: " + f.name + " must not be negative")
		case f.v > maxLimitSize && f.size:
			return errors.New("limits: " + f.name + " must be at most 1GiB")
		case f.v > maxLimitSize:
			return errors.New("limits: " + f.name + " must be at most " + strconv.Itoa(maxLimitSize))
		}
	}
	if l.MaxJSONDepth != 0 && l.MaxJSONDepth < minJSONDepth {
		return errors.New("limits: max_json_depth must be at least " + strconv.Itoa(minJSONDepth))
	}
	var err error
	l.dedupe, err = parseDedupeWindow(l.DedupeWindow)
	return err
}

// parseDedupeWindow reads dedupe_window as handler.Options.DedupeWindow
// takes it: 0 for the default, negative for off.
func parseDedupeWindow(s string) (time.Duration, error) {
	switch s {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	d, err := caddy.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("limits: dedupe_window: want a positive duration or off, got %q", s)
	}
	return d, nil
}

// protocolLimits is the codec's view of l (zero fields: defaults).
func (l *Limits) protocolLimits() protocol.Limits {
	if l == nil {
		return protocol.Limits{}
	}
	return protocol.Limits{
		MaxParts:         l.MaxParts,
		MaxTextBytes:     l.MaxTextSize,
		MaxFileBytes:     l.MaxFileSize,
		MaxMetadataBytes: l.MaxMetadataSize,
	}
}

func (l *Limits) jsonDepth() int {
	if l == nil {
		return 0
	}
	return l.MaxJSONDepth
}

// apply sets the endpoint options l bounds (zero fields: the handler's
// defaults).
func (l *Limits) apply(o *handler.Options) {
	if l == nil {
		return
	}
	o.MaxHistory = l.MaxHistory
	o.MaxHistoryBytes = l.MaxHistorySize
	o.MaxTaskOutput = l.MaxTaskOutput
	o.MaxRunEvents = l.MaxRunEvents
	o.MaxArtifacts = l.MaxArtifacts
	o.MaxRunsPerOwner = l.MaxRunsPerOwner
	o.DedupeWindow = l.dedupe
}

// tasksPerOwner is MaxTasksPerOwner for the store (0: its default).
func (l *Limits) tasksPerOwner() int {
	if l == nil {
		return 0
	}
	return l.MaxTasksPerOwner
}

// runEvents is MaxRunEvents with the handler's default, where the
// store's bound on a task's log is derived from it.
func (l *Limits) runEvents() int {
	if l == nil || l.MaxRunEvents == 0 {
		return handler.DefaultMaxRunEvents
	}
	return l.MaxRunEvents
}

// protocolExtensions is the neutral form, for the card and the endpoint.
func protocolExtensions(list []Extension) []protocol.Extension {
	if len(list) == 0 {
		return nil
	}
	out := make([]protocol.Extension, len(list))
	for i, x := range list {
		out[i] = protocol.Extension{URI: x.URI, Description: x.Description, Required: x.Required, Params: x.Params}
	}
	return out
}
