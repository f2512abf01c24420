package caddya2a

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/handler"
)

// validHandler has the settings every valid handler needs, its upstream
// unnamed (http).
func validHandler() *Handler {
	return &Handler{
		UpstreamRaw: json.RawMessage(`{"url":"http://127.0.0.1:9000"}`),
		CardFields: CardFields{Name: "N", Description: "D",
			Skills: []Skill{{ID: "s", Name: "S", Description: "D", Tags: []string{"t"}}}},
	}
}

// TestReplySetting: the reply field, checked alike for JSON and
// Caddyfile configs.
func TestReplySetting(t *testing.T) {
	for _, tc := range []struct {
		reply   string
		want    string
		mode    handler.ReplyMode
		wantErr string
	}{
		{reply: "", want: ReplyTask, mode: handler.ReplyTask},
		{reply: "task", want: ReplyTask, mode: handler.ReplyTask},
		{reply: "message", want: ReplyMessage, mode: handler.ReplyMessage},
		{reply: "auto", want: ReplyAuto, mode: handler.ReplyAuto},
		{reply: "Message", wantErr: `reply: want "task", "message" or "auto", got "Message"`},
		{reply: "messages", wantErr: `reply: want "task", "message" or "auto", got "messages"`},
	} {
		h := validHandler()
		h.Reply = tc.reply
		if err := h.fill(caddy.NewReplacer()); err != nil {
			t.Fatal(err)
		}
		err := h.check()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("reply %q: error %v, want %q", tc.reply, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("reply %q: %v", tc.reply, err)
		}
		if h.Reply != tc.want || h.replyMode() != tc.mode {
			t.Errorf("reply %q: became %q (mode %d), want %q (mode %d)", tc.reply, h.Reply, h.replyMode(), tc.want, tc.mode)
		}
	}
}

// TestJSONWithoutModuleNames: JSON configs written before the upstream
// and the store were guest modules name neither kind nor type; they mean
// http and memory, with the settings they give, as a config naming them
// does.
func TestJSONWithoutModuleNames(t *testing.T) {
	for _, tc := range []struct{ name, upstream, store string }{
		{"unnamed", `{"url":"http://127.0.0.1:9000","timeout":"2m","header_up":{"X-Key":["k"]}}`, `{"max_tasks":5,"ttl":"2h"}`},
		{"named", `{"kind":"http","url":"http://127.0.0.1:9000","timeout":"2m","header_up":{"X-Key":["k"]}}`, `{"type":"memory","max_tasks":5,"ttl":"2h"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			h := validHandler()
			h.UpstreamRaw = json.RawMessage(tc.upstream)
			h.StoreRaw = json.RawMessage(tc.store)
			if err := h.Provision(ctx); err != nil {
				t.Fatal(err)
			}
			defer h.Cleanup()
			if err := h.Validate(); err != nil {
				t.Fatal(err)
			}
			u, ok := h.upstream.(*HTTPUpstream)
			if !ok || u.Target() != "http://127.0.0.1:9000" || time.Duration(u.Timeout) != 2*time.Minute || u.headers.Get("X-Key") != "k" {
				t.Errorf("upstream %T %+v", h.upstream, h.upstream)
			}
			m, ok := h.store.(*MemoryStore)
			if !ok || m.MaxTasks != 5 || time.Duration(m.TTL) != 2*time.Hour || h.backend == nil {
				t.Errorf("store %T %+v", h.store, h.store)
			}
		})
	}

	// No store at all is memory with its defaults.
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	h := validHandler()
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Cleanup()
	if m, ok := h.store.(*MemoryStore); !ok || m.MaxTasks != DefaultMaxTasks {
		t.Errorf("default store %T %+v", h.store, h.store)
	}
}

// TestCapsApplyToJSON: the caps on limits, on max_request_body and on a
// store's max_bytes hold for JSON configs (they once held only for
// Caddyfiles); the both-paths goldens compare the messages.
func TestCapsApplyToJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(h *Handler)
		want string
	}{
		{"limit size", func(h *Handler) { h.Limits = &Limits{MaxTextSize: 1<<30 + 1} }, "limits: max_text_size must be at most 1GiB"},
		{"limit count", func(h *Handler) { h.Limits = &Limits{MaxParts: 1<<30 + 1} }, "limits: max_parts must be at most 1073741824"},
		{"body", func(h *Handler) { h.MaxRequestBody = 1<<40 + 1 }, "max_request_body must be at most 1TiB"},
		{"dedupe window", func(h *Handler) { h.Limits = &Limits{DedupeWindow: "-1s"} }, `limits: dedupe_window: want a positive duration or off, got "-1s"`},
		{"store", func(h *Handler) { h.StoreRaw = json.RawMessage(`{"max_bytes":1099511627777}`) }, "max_bytes must be at most 1TiB"},
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		h := validHandler()
		tc.set(h)
		err := h.Provision(ctx)
		if err == nil {
			err = h.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		h.Cleanup()
		cancel()
	}
	// At the caps: accepted.
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	h := validHandler()
	h.Limits = &Limits{MaxTextSize: 1 << 30, MaxParts: 1 << 30}
	h.MaxRequestBody = 1 << 40
	h.StoreRaw = json.RawMessage(`{"max_bytes":1099511627776,"share":"caps"}`)
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Cleanup()
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestOneEditApart(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"nmae", "name", true},  // swap
		{"tag", "tags", true},   // insertion
		{"tagss", "tags", true}, // deletion
		{"nbme", "name", true},  // substitution
		{"name", "name", false}, // the same
		{"mane", "name", false}, // two substitutions
		{"nam", "names", false}, // two insertions
		{"", "a", true},
		{"ab", "ba", true},
		{"abc", "cba", false},
	} {
		if got := oneEditApart(tc.a, tc.b); got != tc.want {
			t.Errorf("oneEditApart(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := oneEditApart(tc.b, tc.a); got != tc.want {
			t.Errorf("oneEditApart(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}
