package runs

import (
	"slices"
	"testing"
)

func TestSet(t *testing.T) {
	var s Set
	s.Note("a", true, 1)
	s.Note("b", true, 1)
	s.Note("c", true, 1)
	s.Note("c", false, 2) // settled here
	s.Note("a", true, 2)  // a later turn
	s.Abandon("a", 1)     // the earlier run's end keeps the later turn's
	s.Abandon("b", 1)
	ids := s.IDs()
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"a"}) {
		t.Fatalf("held %q, want a", ids)
	}
	s.Note("d", true, 1)
	ids = []string{"a", "d"}
	s.Drop(ids, func(i int) bool { return ids[i] == "d" })
	if s.Has("a") || !s.Has("d") {
		t.Fatalf("after Drop: a %v d %v, want d alone", s.Has("a"), s.Has("d"))
	}
}
