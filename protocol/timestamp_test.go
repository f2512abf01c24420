package protocol

import (
	"testing"
	"time"
)

func TestTimestamps(t *testing.T) {
	loc := time.FixedZone("x", 2*3600)
	if got := string(appendTimestamp(nil, time.Date(2026, 1, 2, 5, 4, 5, 999999999, loc))); got != `"2026-01-02T03:04:05.999Z"` {
		t.Errorf("got %s", got)
	}
	if got := string(appendTimestamp(nil, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))); got != `"2026-01-02T03:04:05.000Z"` {
		t.Errorf("got %s", got)
	}
	want := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, s := range []string{"2026-01-02T03:04:05Z", "2026-01-02T03:04:05.000Z", "2026-01-02T05:04:05+02:00", "2026-01-02T03:04:05+00:00", "2026-01-02T03:04:05", "2026-01-02 03:04:05Z"} {
		got, ok := parseTimestamp(s)
		if !ok || !got.Equal(want) {
			t.Errorf("parseTimestamp(%q) = %v %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "2026-01-02", "yesterday", "2026-13-02T03:04:05Z"} {
		if _, ok := parseTimestamp(s); ok {
			t.Errorf("parseTimestamp(%q) accepted", s)
		}
	}
}
