package memory

import (
	"fmt"
	"testing"
)

// TestOwnerIndexRemove removes at every position of indexes of several
// sizes and checks the rest stays sorted and complete: remove shifts the
// shorter side, so both branches and their edges are covered.
func TestOwnerIndexRemove(t *testing.T) {
	for n := 1; n <= 6; n++ {
		for at := 0; at < n; at++ {
			x := &ownerIndex{}
			es := make([]*entry, n)
			for i := range es {
				es[i] = &entry{id: fmt.Sprintf("t%d", i), ixTS: int64(i)}
				x.insert(es[i])
			}
			x.remove(es[at])
			if len(x.items) != n-1 {
				t.Fatalf("n=%d at=%d: %d items left", n, at, len(x.items))
			}
			want := 0
			for _, e := range x.items {
				if want == at {
					want++
				}
				if e != es[want] {
					t.Fatalf("n=%d at=%d: got %s, want %s", n, at, e.id, es[want].id)
				}
				want++
			}
			// Removing what is not there changes nothing.
			x.remove(es[at])
			if len(x.items) != n-1 {
				t.Fatalf("n=%d at=%d: second remove changed the index", n, at)
			}
			// The index still takes inserts in order after a front reslice.
			e := &entry{id: "new", ixTS: -1}
			x.insert(e)
			if x.items[0] != e {
				t.Fatalf("n=%d at=%d: insert after remove misplaced", n, at)
			}
		}
	}
}
