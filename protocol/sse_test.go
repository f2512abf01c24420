package protocol

import "testing"

func TestAppendSSEEvent(t *testing.T) {
	tests := []struct {
		id, data, want string
	}{
		{"", `{"a":1}`, "data: {\"a\":1}\n\n"},
		{"7", `{"a":1}`, "id: 7\ndata: {\"a\":1}\n\n"},
		{"1700000000000-0", `{}`, "id: 1700000000000-0\ndata: {}\n\n"},
		{"a\nb\rc", `x`, "id: abc\ndata: x\n\n"},
		{"", "{\n\"a\":1\r\n}\r", "data: {\ndata: \"a\":1\ndata: }\ndata: \n\n"},
		{"", "", "data: \n\n"},
	}
	for _, tt := range tests {
		if got := string(AppendSSEEvent(nil, tt.id, []byte(tt.data))); got != tt.want {
			t.Errorf("AppendSSEEvent(%q, %q) = %q, want %q", tt.id, tt.data, got, tt.want)
		}
	}
	if SSEHeartbeat != ": ping\n\n" {
		t.Errorf("heartbeat %q", SSEHeartbeat)
	}
}
