package redisstore

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

func TestParseEventMessage(t *testing.T) {
	for _, tc := range []struct {
		in       string
		valid    bool
		complete bool
		ids      string
	}{
		{"1-0\n2-1\n2-0\n3\nabc2-1\n2\nde", true, true, "[2-0 2-1]"},
		{"\n5-0\n5-0\n0\n", true, true, "[5-0]"},
		{"1-0\n2-0\n", true, false, "[]"},            // events left out
		{"", false, false, "[]"},                     // a drop
		{"1-0\n2-0\n2-0\n9\nab", false, false, "[]"}, // short
		{"1-0\n2-0\n2-0\nx\nab", false, false, "[]"},
		{"1-0\n3-0\n2-0\n1\na", true, false, "[2-0]"}, // ends before last
	} {
		m, ok := parseEventMessage(tc.in)
		if ok != tc.valid || m.ok != tc.complete || fmt.Sprint(m.ids) != tc.ids {
			t.Errorf("%q: valid %v complete %v ids %v, want %v %v %s", tc.in, ok, m.ok, m.ids, tc.valid, tc.complete, tc.ids)
		}
	}
}

// serverCount is how many times the server ran command name (INFO
// commandstats), inside scripts too.
func serverCount(t *testing.T, s *Store, name string) int {
	t.Helper()
	info, err := s.cli().Do(context.Background(), s.cli().B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+name+":calls="); ok {
			var n int
			fmt.Sscan(rest[:strings.IndexByte(rest, ',')], &n)
			return n
		}
	}
	return 0
}

// logReads is how many reads of a task's log the server has run: the
// read script's HGET of the event count (no other command of a stream's
// path is an HGET).
func logReads(t *testing.T, s *Store) int { return serverCount(t, s, "hget") }

// tailing is two stores of one prefix, a's task t1 with one event, and b
// tailing it (its first Next read the event and subscribed): a's version
// of t1 and the id b has read up to.
func tailing(t *testing.T) (a, b *Store, v uint64, after string) {
	t.Helper()
	url, _ := startRedis(t)
	prefix := newPrefix()
	a = newStore(t, url, Options{KeyPrefix: prefix})
	b = newStore(t, url, Options{KeyPrefix: prefix})
	v, err := a.Create(ctx5(t), "alice", task("t1", protocol.StateWorking), chunk("first"))
	if err != nil {
		t.Fatal(err)
	}
	// The first Next reads (nothing was heard yet) and subscribes.
	evs, _, err := b.Next("t1", "")
	if err != nil || len(evs) != 1 {
		t.Fatalf("first Next: %v %v", evs, err)
	}
	return a, b, v, evs[0].ID
}

// A stream tailing a task on another store is handed each write's events
// from the write's message, with no read, the same events a read gives;
// what the message could not carry (a lost message, events over 16 KiB,
// more than the cache keeps) is read instead.
func TestNextFromWhatWasHeard(t *testing.T) {
	a, b, v, after := tailing(t)
	ctx := ctx5(t)
	var err error
	var written string // the newest id a write returned
	write := func(events ...protocol.Event) {
		t.Helper()
		var err error
		if v, written, err = a.Update(ctx, "t1", v, task("t1", protocol.StateWorking), events...); err != nil {
			t.Fatal(err)
		}
	}
	// heard waits until b has heard the newest write: a Next before that
	// reads, rightly, since b does not know yet what its message holds.
	heard := func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			b.sub.mu.Lock()
			c := b.sub.recent["t1"]
			ok := c != nil && c.newest() == written
			b.sub.mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("b never heard the write")
			}
			time.Sleep(time.Millisecond)
		}
	}
	// next waits for the next events after after and checks them against
	// a read of the log; one that wants no read first waits for the
	// write's message.
	next := func(wantRead bool) []store.StoredEvent {
		t.Helper()
		if !wantRead {
			heard()
		}
		reads := logReads(t, b)
		var got []store.StoredEvent
		deadline := time.Now().Add(5 * time.Second)
		for len(got) == 0 {
			evs, ch, err := b.Next("t1", after)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) > 0 {
				got = evs
				break
			}
			select {
			case <-ch:
			case <-time.After(time.Until(deadline)):
				t.Fatal("no events")
			}
		}
		if read := logReads(t, b) > reads; read != wantRead {
			t.Fatalf("read the log: %v, want %v", read, wantRead)
		}
		want, err := b.Events(ctx, "t1", after, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) < len(got) || !reflect.DeepEqual(got, want[:len(got)]) {
			t.Fatalf("Next gave\n%+v\na read gives\n%+v", got, want)
		}
		after = got[len(got)-1].ID
		return got
	}
	write(chunk("a"), chunk("b"))
	if got := next(false); len(got) != 2 {
		t.Fatalf("%d events, want 2", len(got))
	}
	write(chunk("c"))
	next(false)
	// What was heard moved past the stream (a message it needed was lost,
	// here: one heard after it, of events left out): read.
	write(chunk("d"))
	d, err := a.Events(ctx, "t1", after, false)
	if err != nil || len(d) != 1 {
		t.Fatalf("the log after d: %v %v", d, err)
	}
	for {
		b.sub.mu.Lock()
		c := b.sub.recent["t1"]
		heard := c != nil && c.newest() == d[0].ID
		if heard {
			b.sub.heard("t1", d[0].ID+"\n9999999999999\n")
		}
		b.sub.mu.Unlock()
		if heard {
			break
		}
		time.Sleep(time.Millisecond)
	}
	next(true)
	// Events over 16 KiB are left out of the message: read.
	write(chunk(strings.Repeat("x", 20<<10)))
	next(true)
	write(chunk("e"))
	next(false)
	// More events at once than the cache keeps: the newest are kept, the
	// stream behind them reads.
	var many []protocol.Event
	for i := range tailCacheEvents + 8 {
		many = append(many, chunk(fmt.Sprint("m", i)))
	}
	write(many...)
	if got := next(true); len(got) != tailCacheEvents+8 {
		t.Fatalf("%d events, want %d", len(got), tailCacheEvents+8)
	}
	write(chunk("f"))
	next(false)
	// Nothing new: the channel, no read.
	reads := logReads(t, b)
	evs, ch, err := b.Next("t1", after)
	if err != nil || len(evs) != 0 || ch == nil || logReads(t, b) != reads {
		t.Fatalf("Next at the newest: %v %v %v", evs, ch, err)
	}
	write(chunk("g"))
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the channel was not closed by the next write")
	}
	next(false)
	b.sub.mu.Lock()
	budget := b.sub.recentBytes
	b.sub.mu.Unlock()
	if budget <= 0 || budget > 64<<10 {
		t.Fatalf("the cache holds %d bytes", budget)
	}
}

// A tailing store whose subscription is cut misses the messages sent
// meanwhile: what it heard before can no longer say a log has nothing
// new, and a stream waiting on it gets the events written during the cut.
func TestNextAfterTheSubscriptionIsCut(t *testing.T) {
	a, b, v, after := tailing(t)
	ctx := ctx5(t)
	var err error
	// Heard: b knows the log ends at after.
	if v, _, err = a.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("heard")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		evs, ch, err := b.Next("t1", after)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].ID
			break
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			t.Fatal("the heard write did not come")
		}
	}
	deadline = time.Now().Add(5 * time.Second)
	// Cut every pub/sub connection, write while b reconnects, and look
	// only once it has: the stream was busy meanwhile.
	epoch := func() uint64 {
		b.sub.mu.Lock()
		defer b.sub.mu.Unlock()
		if b.sub.conn == nil {
			return 0
		}
		return b.sub.epoch
	}
	before := epoch()
	if err := a.cli().Do(ctx, a.cli().B().ClientKill().TypePubsub().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if _, _, err = a.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("during the cut")); err != nil {
		t.Fatal(err)
	}
	for epoch() <= before {
		if time.Now().After(deadline) {
			t.Fatal("b did not reconnect")
		}
		time.Sleep(5 * time.Millisecond)
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		evs, ch, err := b.Next("t1", after)
		if err == nil && len(evs) > 0 {
			if len(evs) != 1 || evs[0].Event.Artifact == nil || evs[0].Event.Artifact.Artifact.Parts[0].Text != "during the cut" {
				t.Fatalf("after the cut: %+v", evs)
			}
			return
		}
		if ch == nil {
			ch = closedChan
			time.Sleep(20 * time.Millisecond) // an error while b reconnects
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			t.Fatal("the write made during the cut never reached the waiting stream")
		}
	}
}

// The cache drops its oldest events by reslicing: the events a stream was
// handed before (clipped, as fromCache hands them) stay as they were
// while many more messages come, one event each; the cache keeps the
// newest tailCacheEvents and counts exactly their bytes.
func TestHeardKeepsWhatWasHandedOut(t *testing.T) {
	b := &subscriber{recent: map[string]*tailCache{}}
	msg := func(k int) string {
		raw := pack.EncodeEvent(nil, "t1", &protocol.Event{Artifact: &protocol.ArtifactUpdate{TaskID: "t1",
			Artifact: protocol.Artifact{ID: "a", Parts: []protocol.Part{{Kind: protocol.PartText, Text: fmt.Sprint("chunk ", k)}}}, Append: true}})
		return fmt.Sprintf("%d\n%d\n%d\n%d\n%s", k-1, k, k, len(raw), raw)
	}
	var held [][]store.StoredEvent
	var copies [][]store.StoredEvent
	for k := 1; k <= 5*tailCacheEvents; k++ {
		b.heard("t1", msg(k))
		c := b.recent["t1"]
		if k%7 == 0 {
			h := slices.Clip(c.evs)
			held = append(held, h)
			copies = append(copies, slices.Clone(h))
		}
	}
	for i := range held {
		if !reflect.DeepEqual(held[i], copies[i]) {
			t.Fatalf("events handed out were written over:\n%+v\nwas\n%+v", held[i], copies[i])
		}
	}
	c := b.recent["t1"]
	if len(c.evs) != tailCacheEvents || c.base != fmt.Sprint(4*tailCacheEvents) || c.newest() != fmt.Sprint(5*tailCacheEvents) {
		t.Fatalf("cache holds %d events after %s up to %s", len(c.evs), c.base, c.newest())
	}
	sum := 0
	for _, n := range c.sizes {
		sum += n
	}
	if len(c.sizes) != len(c.evs) || c.bytes != sum || b.recentBytes != sum {
		t.Fatalf("sizes %d for %d events, bytes %d / %d, want %d", len(c.sizes), len(c.evs), c.bytes, b.recentBytes, sum)
	}
	if got := c.evs[0].Event.Artifact.Artifact.Parts[0].Text; got != fmt.Sprint("chunk ", 4*tailCacheEvents+1) {
		t.Fatalf("oldest kept %q", got)
	}
}
