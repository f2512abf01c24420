package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/push"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// PushOptions turn push notifications on (Options.Push): the configs'
// methods, the inline config of a send, and a delivery for every change
// of a task that has configs.
type PushOptions struct {
	// Dispatcher delivers; it outlives configs (it lives with the store).
	Dispatcher *push.Dispatcher
	// Guard checks a config's URL when it is set; Client (through the
	// same guard) delivers.
	Guard  *push.Guard
	Client *http.Client
	// Timeout bounds one attempt, MaxAttempts the attempts of one
	// delivery, MaxConfigs the configs of one task.
	Timeout     time.Duration
	MaxAttempts int
	MaxConfigs  int
	// Sign, when set, signs each attempt: it sets its header(s) in h for
	// body, sent to url about task, as issuer iss.
	Sign func(h http.Header, body []byte, task, url, iss string) error
	// Issuer is the iss of the deliveries of a config set by a caller
	// who reached the mount at rpcURL (nil, or a caller without an
	// Endpoint: none).
	Issuer func(rpcURL string) string
	// Handoff: the store hands work to other processes (store.Handoffs),
	// so each notice can be written down if the dispatcher closes before
	// it is delivered (resumeNotice delivers it elsewhere).
	Handoff bool
}

// The push defaults, written once.
const (
	DefaultPushTimeout     = 10 * time.Second
	DefaultPushMaxAttempts = 5
	DefaultPushMaxConfigs  = 10
)

// pushEnabled reports whether push notifications are on.
func (s *Service) pushEnabled() bool { return s.opts.Push != nil }

// storedPush is a config as the service keeps it in the store: the
// config and the version it was set in, whose body shape its deliveries
// take.
type storedPush struct {
	V           protocol.Version `json:"v"`
	URL         string           `json:"url"`
	Token       string           `json:"token,omitempty"`
	Schemes     []string         `json:"schemes,omitempty"`
	Credentials string           `json:"credentials,omitempty"`
	// Iss is the issuer the config's signed deliveries name.
	Iss string `json:"iss,omitempty"`
	// Set and Proc: when (Unix ns) and by which process the config was
	// set. The dispatcher works a notice out when its turn comes, so a
	// config set just after a write could get that older change (a 1.0
	// receiver saw SUBMITTED after the INPUT_REQUIRED it was set at);
	// a notice queued before Set skips the config. Only this process's
	// clock is trusted for it: a config set elsewhere may still get one
	// older change (skew must never drop a newer one). An inline config
	// (Set 0) gets its send's writes from the first.
	Set  int64  `json:"set,omitempty"`
	Proc string `json:"proc,omitempty"`
}

// process names this process in the configs it sets (storedPush.Proc).
var process = newID()

// older reports whether a notice queued at (Unix ns, this process's
// clock) is older than config s.
func (s *storedPush) older(at int64) bool { return s.Set != 0 && s.Proc == process && at < s.Set }

func (s *storedPush) config(task, id string) protocol.PushConfig {
	c := protocol.PushConfig{TaskID: task, ID: id, URL: s.URL, Token: s.Token, Version: s.V}
	if len(s.Schemes) > 0 {
		c.Auth = &protocol.PushAuth{Schemes: s.Schemes, Credentials: s.Credentials}
	}
	return c
}

func decodeStoredPush(c store.PushConfig) (storedPush, bool) {
	var s storedPush
	return s, json.Unmarshal(c.Data, &s) == nil
}

// checkPushURL refuses a webhook URL the guard refuses, as -32602
// naming the reason.
func (s *Service) checkPushURL(ctx context.Context, field, url string) *protocol.Error {
	err := s.opts.Push.Guard.CheckURL(ctx, url)
	if err == nil {
		return nil
	}
	reason := err.Error()
	if r, ok := errors.AsType[*push.Refused](err); ok {
		reason = r.Reason
	}
	return protocol.ErrInvalidParams("The push notification URL is refused: "+reason,
		protocol.FieldViolation{Field: field, Description: reason})
}

// SetPushConfig stores a config for the caller's task (create/set),
// replacing one with the same id; its deliveries take the body shape of
// the version it was set in (p.Version). Without push it is -32003, as
// Admit answers before any binding gets here.
func (s *Service) SetPushConfig(ctx context.Context, c Caller, p *protocol.PushConfig) (*protocol.PushConfig, *protocol.Error) {
	if !s.pushEnabled() {
		return nil, protocol.ErrPushNotSupported()
	}
	if perr := s.checkPushURL(ctx, "url", p.URL); perr != nil {
		return nil, perr
	}
	return s.putPushConfig(ctx, c, p, time.Now().UnixNano())
}

// putPushConfig stores p, set at (Unix ns; 0 for a send's inline
// config).
func (s *Service) putPushConfig(ctx context.Context, c Caller, p *protocol.PushConfig, at int64) (*protocol.PushConfig, *protocol.Error) {
	cfg := *p
	if cfg.ID == "" {
		cfg.ID = newID()
	}
	sp := storedPush{V: cfg.Version, URL: cfg.URL, Token: cfg.Token}
	if at != 0 {
		sp.Set, sp.Proc = at, process
	}
	if po := s.opts.Push; po.Issuer != nil && c.Endpoint != nil {
		if u, err := c.Endpoint.RPCURL(); err == nil {
			sp.Iss = po.Issuer(u)
		}
	}
	if cfg.Auth != nil {
		sp.Schemes, sp.Credentials = cfg.Auth.Schemes, cfg.Auth.Credentials
	}
	data, err := json.Marshal(&sp)
	if err != nil {
		return nil, internalError(c.log(s.log), "encode push config", err)
	}
	max := s.opts.Push.MaxConfigs
	err = s.opts.Store.PutPushConfig(ctx, c.Owner, cfg.TaskID, store.PushConfig{ID: cfg.ID, Data: data}, max)
	if errors.Is(err, store.ErrTooManyPushConfigs) {
		n := strconv.Itoa(max)
		perr := protocol.ErrInvalidParams("The task holds "+n+" push notification configs, the most it may (push max_configs); delete one first",
			protocol.FieldViolation{Field: "id", Description: "the task has " + n + " configs already"})
		perr.Metadata = map[string]string{"limit": "max_configs", "max": n}
		return nil, perr
	}
	if err != nil {
		return nil, storeError(c.log(s.log), "set push config", cfg.TaskID, err)
	}
	return &cfg, nil
}

// pushConfigs reads the caller's task's configs, decoded.
func (s *Service) pushConfigs(ctx context.Context, owner, task string) ([]protocol.PushConfig, *protocol.Error) {
	raw, err := s.opts.Store.PushConfigs(ctx, owner, task)
	if err != nil {
		return nil, storeError(s.log, "get push configs", task, err)
	}
	out := make([]protocol.PushConfig, 0, len(raw))
	for _, r := range raw {
		if s, ok := decodeStoredPush(r); ok {
			out = append(out, s.config(task, r.ID))
		}
	}
	return out, nil
}

// GetPushConfig returns one config of the caller's task (p.ID "": the
// first, as 0.3's get by task alone asks); a config that is not there is
// -32001, as the spec says.
func (s *Service) GetPushConfig(ctx context.Context, c Caller, p *protocol.PushConfigID) (*protocol.PushConfig, *protocol.Error) {
	cfgs, perr := s.pushConfigs(ctx, c.Owner, p.TaskID)
	if perr != nil {
		return nil, perr
	}
	for i := range cfgs {
		if p.ID == "" || cfgs[i].ID == p.ID {
			cfgs[i].Tenant = p.Tenant
			return &cfgs[i], nil
		}
	}
	return nil, protocol.ErrTaskNotFound(p.TaskID)
}

// ListPushConfigs returns a page of the caller's task's configs, in the
// order they were first set; the page token is the index to go on from.
func (s *Service) ListPushConfigs(ctx context.Context, c Caller, p *protocol.PushListParams) (*protocol.PushListResult, *protocol.Error) {
	cfgs, perr := s.pushConfigs(ctx, c.Owner, p.TaskID)
	if perr != nil {
		return nil, perr
	}
	from := 0
	if p.PageToken != "" {
		n, err := strconv.Atoi(p.PageToken)
		if err != nil || n < 0 || n > len(cfgs) || strconv.Itoa(n) != p.PageToken {
			return nil, protocol.ErrInvalidParams("The page token is not one this server gave",
				protocol.FieldViolation{Field: "pageToken", Description: "is not a token of this list"})
		}
		from = n
	}
	res := &protocol.PushListResult{Configs: cfgs[from:]}
	if p.PageSize > 0 && len(res.Configs) > p.PageSize {
		res.Configs = res.Configs[:p.PageSize]
		res.NextPageToken = strconv.Itoa(from + p.PageSize)
	}
	for i := range res.Configs {
		res.Configs[i].Tenant = p.Tenant
	}
	return res, nil
}

// DeletePushConfig removes a config of the caller's task; removing one
// that is not there is no error (delete is idempotent), but the task
// must be the caller's.
func (s *Service) DeletePushConfig(ctx context.Context, c Caller, p *protocol.PushConfigID) *protocol.Error {
	if err := s.opts.Store.DeletePushConfig(ctx, c.Owner, p.TaskID, p.ID); err != nil {
		return storeError(c.log(s.log), "delete push config", p.TaskID, err)
	}
	return nil
}

// notifyRunnerWrites makes the runner's own writes (a stopped replica's
// running task recorded failed) notify through this service's push
// settings: the newest service with push on a runner calls it.
func (s *Service) notifyRunnerWrites() {
	if fn := s.afterWrite; fn != nil {
		s.opts.Runner.notify.Store(&fn)
	}
}

// notifier is the runs' hook after each stored write: nil without push
// and without an observer.
func (s *Service) notifier() func(string, *protocol.Task, string, []protocol.Event) {
	return s.afterWrite
}

// notify is written without force: the hook of the runs' and the
// runner's writes.
func (s *Service) notify(owner string, t *protocol.Task, last string, evs []protocol.Event) {
	s.written(owner, t, last, evs, false)
}

// written is what follows a stored write of task t (its snapshot after
// the write, the events written, last the id of the newest of them, ""
// if unknown): the observer hears its states, and the push configs get
// its events (notifyWrite; force as there).
func (s *Service) written(owner string, t *protocol.Task, last string, evs []protocol.Event, force bool) {
	if o := s.opts.Observer; o != nil {
		observeStates(o, evs)
	}
	s.notifyWrite(owner, t, last, evs, force)
}

// notifyWrite queues the deliveries of one write to task t: worked out
// when their turn comes, for the configs the task has then. 1.0
// receivers get each event as a StreamResponse, 0.3 receivers the task
// once per write. force: queue it even if the store says the write found
// no configs (a send's inline config, put after the task's first write).
func (s *Service) notifyWrite(owner string, t *protocol.Task, last string, evs []protocol.Event, force bool) {
	po := s.opts.Push
	if po == nil || len(evs) == 0 {
		return
	}
	if h, ok := store.As[store.PushHints](s.opts.Store); ok {
		if may := h.MayHavePushConfigs(t.ID, t.Status.State.Terminal()); !may && !force {
			// The write found no configs: nothing to read or deliver.
			return
		}
	}
	if last == "" {
		// The log's first write (Create returns no ids): the task's
		// creation, once per task.
		last = "c"
	}
	s.enqueue(owner, t, last, evs, true)
}

// enqueue queues the notice of one write; claim: ask the store first
// (false for a notice handed over by a process that stopped: it holds
// the claims of what it did not deliver).
func (s *Service) enqueue(owner string, t *protocol.Task, last string, evs []protocol.Event, claim bool) {
	po := s.opts.Push
	var handoff func() []byte
	if po.Handoff {
		handoff = func() []byte { return s.encodeNotice(owner, t, last, evs) }
	}
	at := time.Now().UnixNano()
	po.Dispatcher.EnqueueHandoff(owner, t.ID, func(ctx context.Context) []push.Delivery {
		raw, err := s.opts.Store.PushConfigs(ctx, owner, t.ID)
		if err != nil {
			// A closing dispatcher cancels ctx: the notice is handed off
			// or counted in its one log line, not lost here.
			if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
				s.log.Warn("a2a: push configs could not be read; notifications of this change are lost",
					zap.String("task_id", t.ID), zap.Error(err))
			}
			return nil
		}
		// Each body is encoded once, for every config of its version:
		// the 0.3 Task, the 1.0 StreamResponse of each event.
		var task03 []byte
		var events10 [][]byte
		var out []push.Delivery
		for _, r := range raw {
			sp, ok := decodeStoredPush(r)
			if !ok || !s.wire.served[sp.V] || sp.older(at) {
				continue
			}
			if sp.V == protocol.V03 {
				if task03 == nil {
					task03 = s.wire.codecs[protocol.V03].AppendTask(nil, t)
				}
				out = append(out, s.delivery(po, t.ID, r.ID, last, &sp, task03, claim))
				continue
			}
			if events10 == nil {
				for i := range evs {
					events10 = append(events10, s.wire.codecs[protocol.V10].AppendStreamResult(nil, &evs[i]))
				}
			}
			for i, body := range events10 {
				out = append(out, s.delivery(po, t.ID, r.ID, last+"."+strconv.Itoa(i), &sp, body, claim))
			}
		}
		return out
	}, handoff)
}

// handedNotice is a notice as a stopping process writes it down: the
// task and its events in the 1.0 encoding, whatever versions are served
// (the 1.0 codec reads them back, held to its limits).
type handedNotice struct {
	Owner  string            `json:"owner"`
	Last   string            `json:"last"`
	Task   json.RawMessage   `json:"task"`
	Events []json.RawMessage `json:"events"`
}

func (s *Service) encodeNotice(owner string, t *protocol.Task, last string, evs []protocol.Event) []byte {
	h := handedNotice{Owner: owner, Last: last, Task: s.wire.codecs[protocol.V10].AppendTask(nil, t)}
	for i := range evs {
		h.Events = append(h.Events, s.wire.codecs[protocol.V10].AppendStreamResult(nil, &evs[i]))
	}
	b, _ := json.Marshal(&h)
	return b
}

// resumeNotice queues a notice another process wrote down as it stopped
// (store.Handoffs): its deliveries go out from here, without claims
// (the stopped process holds those of what it did not deliver; a
// receiver may see one it already got, as A2A allows).
func (s *Service) resumeNotice(b []byte) error {
	if s.opts.Push == nil {
		return errors.New("handler: push is off")
	}
	var h handedNotice
	if err := json.Unmarshal(b, &h); err != nil {
		return err
	}
	t, err := s.wire.codecs[protocol.V10].DecodeTask(h.Task)
	if err != nil {
		return err
	}
	evs := make([]protocol.Event, 0, len(h.Events))
	for _, raw := range h.Events {
		ev, err := s.wire.codecs[protocol.V10].DecodeStreamResult(raw)
		if err != nil {
			return err
		}
		evs = append(evs, *ev)
	}
	s.enqueue(h.Owner, t, h.Last, evs, false)
	return nil
}

// delivery is one POST of body to config cfgID's receiver; key names
// the event within the task (the claim, so one replica delivers it).
func (s *Service) delivery(po *PushOptions, task, cfgID, key string, sp *storedPush, body []byte, claim bool) push.Delivery {
	h := http.Header{"Content-Type": {"application/json"}}
	if sp.Token != "" {
		h["X-A2a-Notification-Token"] = []string{sp.Token}
		h["A2a-Notification-Token"] = []string{sp.Token}
	}
	if len(sp.Schemes) > 0 && sp.Credentials != "" {
		h["Authorization"] = []string{sp.Schemes[0] + " " + sp.Credentials}
	}
	d := push.Delivery{TaskID: task, ConfigID: cfgID, URL: sp.URL, Header: h, Body: body,
		Client: po.Client, Timeout: po.Timeout, MaxAttempts: po.MaxAttempts,
	}
	if claim {
		d.Claim = func(ctx context.Context) (bool, error) {
			return s.opts.Store.ClaimDelivery(ctx, task, cfgID+"|"+key)
		}
	}
	if po.Sign != nil {
		url, iss := sp.URL, sp.Iss
		d.Sign = func(h http.Header, body []byte) error { return po.Sign(h, body, task, url, iss) }
	}
	return d
}
