package caddya2a

import (
	"errors"
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Limits bound what one JSON-RPC request may carry, beyond the body size
// (max_request_body). A request over a limit is refused with -32602
// (-32600 for the nesting depth) naming the limit, before anything is
// stored or sent to the agent. Unset fields take their defaults.
type Limits struct {
	// MaxParts bounds the parts of one message. Default: 64.
	MaxParts int `json:"max_parts,omitempty"`
	// MaxTextSize bounds one text part, in bytes. Default: 1MiB.
	MaxTextSize int `json:"max_text_size,omitempty"`
	// MaxFileSize bounds the decoded bytes of one inline file part,
	// computed from its base64 length before anything is decoded. File
	// parts given by URL are passed to the agent as they are and never
	// fetched. Note that the body limit applies first: base64 makes a file
	// a third larger on the wire. Default: 4MiB.
	MaxFileSize int `json:"max_file_size,omitempty"`
	// MaxMetadataSize bounds each metadata object (of the request, the
	// message and each part) as sent, in bytes. Default: 64KiB.
	MaxMetadataSize int `json:"max_metadata_size,omitempty"`
	// MaxJSONDepth bounds how deeply the request body nests arrays and
	// objects (at least 8). Default: 32.
	MaxJSONDepth int `json:"max_json_depth,omitempty"`
	// MaxHistory is how many messages a task keeps and re-sends to the
	// agent each turn (the oldest are dropped). Default: 100.
	MaxHistory int `json:"max_history,omitempty"`
	// MaxHistorySize bounds the same history in bytes of content; the
	// newest message is always kept. Default: 8MiB.
	MaxHistorySize int `json:"max_history_size,omitempty"`
	// MaxTaskOutput bounds the agent's output one task holds (artifacts
	// and agent messages, all turns), in bytes of content; a message reply
	// too. An agent that goes over it ends the task failed, with a status
	// message naming the limit. Default: 16MiB.
	MaxTaskOutput int `json:"max_task_output,omitempty"`
	// MaxRunEvents bounds the events (chunks, artifacts, status updates)
	// the agent may produce in one turn; over it, the task fails as for
	// MaxTaskOutput. Default: 10000.
	MaxRunEvents int `json:"max_run_events,omitempty"`
	// MaxArtifacts bounds the artifacts one task holds; over it, the task
	// fails as for MaxTaskOutput. Default: 256.
	MaxArtifacts int `json:"max_artifacts,omitempty"`
	// MaxTasksPerOwner bounds the tasks the store keeps for one caller;
	// one more evicts the caller's oldest finished, then waiting task, and
	// when all are running the send is refused with -32080. Anonymous
	// callers are not counted per caller. Default: 1000.
	MaxTasksPerOwner int `json:"max_tasks_per_owner,omitempty"`
	// MaxRunsPerOwner bounds the tasks one caller has running at once; a
	// send over it is refused with -32080. Anonymous callers are not
	// counted per caller. Default: 32.
	MaxRunsPerOwner int `json:"max_runs_per_owner,omitempty"`
}

// minJSONDepth is the smallest max_json_depth that leaves room for a
// SendMessage with a part and its metadata.
const minJSONDepth = 8

// check refuses negative limits and a depth no request could pass.
func (l *Limits) check() error {
	if l == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{protocol.LimitMaxParts, l.MaxParts},
		{protocol.LimitMaxTextBytes, l.MaxTextSize},
		{protocol.LimitMaxFileBytes, l.MaxFileSize},
		{protocol.LimitMaxMetadataBytes, l.MaxMetadataSize},
		{protocol.LimitMaxJSONDepth, l.MaxJSONDepth},
		{"max_history", l.MaxHistory},
		{"max_history_size", l.MaxHistorySize},
		{"max_task_output", l.MaxTaskOutput},
		{"max_run_events", l.MaxRunEvents},
		{"max_artifacts", l.MaxArtifacts},
		{"max_tasks_per_owner", l.MaxTasksPerOwner},
		{"max_runs_per_owner", l.MaxRunsPerOwner},
	} {
		if f.v < 0 {
			return errors.New("limits: " + f.name + " must not be negative")
		}
	}
	if l.MaxJSONDepth != 0 && l.MaxJSONDepth < minJSONDepth {
		return errors.New("limits: max_json_depth must be at least " + strconv.Itoa(minJSONDepth))
	}
	return nil
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
}

// tasksPerOwner is MaxTasksPerOwner for the store (0: its default).
func (l *Limits) tasksPerOwner() int {
	if l == nil {
		return 0
	}
	return l.MaxTasksPerOwner
}

// runEvents is MaxRunEvents with its default written once, where the
// store's bound on a task's log is derived from it.
func (l *Limits) runEvents() int {
	if l == nil || l.MaxRunEvents == 0 {
		return handler.DefaultMaxRunEvents
	}
	return l.MaxRunEvents
}

// maxLimitSize caps a size limit: beyond it the number is a typo, and it
// keeps every size an int on any platform.
const maxLimitSize = 1 << 30

// maxStoreBytes caps a store's max_bytes (1 TiB): a machine's memory, not
// one request's.
const maxStoreBytes = 1 << 40

// unmarshalLimits parses `limits { … }`; every key may appear once.
func (h *Handler) unmarshalLimits(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	l := &Limits{}
	// Counts are positive integers, sizes humanized byte sizes; both
	// at most maxLimitSize.
	counts := map[string]*int{
		"max_parts": &l.MaxParts, "max_json_depth": &l.MaxJSONDepth, "max_history": &l.MaxHistory,
		"max_run_events": &l.MaxRunEvents, "max_artifacts": &l.MaxArtifacts,
		"max_tasks_per_owner": &l.MaxTasksPerOwner, "max_runs_per_owner": &l.MaxRunsPerOwner,
	}
	sizes := map[string]*int{
		"max_text_size": &l.MaxTextSize, "max_file_size": &l.MaxFileSize, "max_metadata_size": &l.MaxMetadataSize,
		"max_history_size": &l.MaxHistorySize, "max_task_output": &l.MaxTaskOutput,
	}
	seen := map[string]int{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if line, dup := seen[key]; dup {
			return d.Errf("duplicate limits subdirective %q (first at line %d)", key, line)
		}
		seen[key] = d.Line()
		v, err := oneArg(d)
		if err != nil {
			return err
		}
		if p, ok := counts[key]; ok {
			*p, err = positiveInt(d, key, v)
		} else if p, ok := sizes[key]; ok {
			*p, err = sizeArg(d, key, v)
		} else {
			return d.Errf("unknown limits subdirective %q", key)
		}
		if err == nil && key == "max_json_depth" && l.MaxJSONDepth < minJSONDepth {
			err = d.Errf("max_json_depth: must be at least %d", minJSONDepth)
		}
		if err != nil {
			return err
		}
	}
	h.Limits = l
	return nil
}

func positiveInt(d *caddyfile.Dispenser, key, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimitSize {
		return 0, d.Errf("%s: want a positive integer, got %q", key, v)
	}
	return n, nil
}

func sizeArg(d *caddyfile.Dispenser, key, v string) (int, error) {
	n, err := humanize.ParseBytes(v)
	if err != nil || n == 0 || n > maxLimitSize {
		return 0, d.Errf("%s: invalid size %q (e.g. 512KiB, at most 1GiB)", key, v)
	}
	return int(n), nil
}
