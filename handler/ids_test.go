package handler

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

var (
	uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

func TestNewID(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := newID()
		if !uuidV4.MatchString(id) {
			t.Fatalf("%q is not a canonical version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("%q repeated", id)
		}
		seen[id] = true
	}
}

// Task ids are version 7: they sort by creation, and carry its time.
func TestNewTaskID(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = newTaskID()
		if !uuidV7.MatchString(ids[i]) {
			t.Fatalf("%q is not a canonical version 7 UUID", ids[i])
		}
	}
	after := time.Now().Add(time.Millisecond)
	if !slices.IsSorted(ids) {
		t.Fatal("task ids made one after another do not sort in that order")
	}
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Fatal("a task id repeated")
	}
	sec, nsec := uuid.MustParse(ids[0]).Time().UnixTime()
	if at := time.Unix(sec, nsec); at.Before(before) || at.After(after) {
		t.Fatalf("task id time %v is not the time it was made (%v … %v)", at, before, after)
	}
}

func BenchmarkNewID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = newID()
	}
}

func BenchmarkNewTaskID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = newTaskID()
	}
}
