package caddya2a

import (
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
)

// TestReplySetting: the JSON reply field (the Caddyfile checks its own
// spelling with a line number; JSON configs meet this check instead).
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
		{reply: "Message", wantErr: `reply: want "task" or "message", got "Message"`},
		{reply: "messages", wantErr: `reply: want "task" or "message", got "messages"`},
	} {
		h := &Handler{Upstream: &Upstream{URL: "http://127.0.0.1:9000"}, Reply: tc.reply}
		err := h.applyDefaults()
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
