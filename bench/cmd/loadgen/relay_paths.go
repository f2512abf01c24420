package main

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// relayPath is one way of reading the same paced stream, and the chunk
// latencies it measured.
type relayPath struct {
	name string
	// read reads one whole stream (seq numbers it uniquely), calling f
	// with each chunk, and returns how many it held.
	read func(seq int, f chunkFunc) (int, error)
	lat  []int64 // ns, sorted once runRelayPaths returns
	errs int
	err  error
}

// runRelayPaths reads streams streams per path, over and over for dur,
// every path at the same time, so whatever else the machine is doing hits
// them alike (the streams are paced, so they barely load it). A stream
// that fails, or holds other than chunks chunks, fails its path.
func runRelayPaths(paths []*relayPath, streams, chunks int, dur time.Duration) {
	var (
		mu  sync.Mutex
		seq int
	)
	end := time.Now().Add(dur)
	var wg sync.WaitGroup
	for _, p := range paths {
		for range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lat := make([]int64, 0, chunks)
				for time.Now().Before(end) {
					mu.Lock()
					seq++
					s := seq
					mu.Unlock()
					lat = lat[:0]
					n, err := p.read(s, func(sent int64, read time.Time) { lat = append(lat, read.UnixNano()-sent) })
					if err == nil && n != chunks {
						err = fmt.Errorf("%d chunks, want %d", n, chunks)
					}
					mu.Lock()
					if err != nil {
						p.errs++
						if p.err == nil {
							p.err = err
						}
					} else {
						p.lat = append(p.lat, lat...)
					}
					mu.Unlock()
					if err != nil {
						return // one failure fails the path; no retry storm
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, p := range paths {
		logf("relay %-36s %d samples, %d errors %v", p.name, len(p.lat), p.errs, p.err)
		slices.Sort(p.lat)
	}
}

// addedRow is a row of differences under the table: path minus base, per
// percentile.
type addedRow struct {
	name       string
	path, base *relayPath
}

// printRelayTable prints one row per path, then the rows of differences.
func printRelayTable(paths []*relayPath, added []addedRow) {
	fmt.Println("| path | chunks | p50 | p90 | p99 | max | errors |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	for _, p := range paths {
		errs := "0"
		if p.errs > 0 {
			errs = fmt.Sprintf("**FAIL %d**: %.120v", p.errs, p.err)
		}
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %s |\n", p.name, len(p.lat), fmtDur(percentile(p.lat, 0.5)),
			fmtDur(percentile(p.lat, 0.9)), fmtDur(percentile(p.lat, 0.99)), fmtDur(time.Duration(lastOf(p.lat))), errs)
	}
	for _, a := range added {
		fmt.Printf("| %s | | %s | %s | %s | | |\n", a.name,
			fmtSigned(percentile(a.path.lat, 0.5)-percentile(a.base.lat, 0.5)),
			fmtSigned(percentile(a.path.lat, 0.9)-percentile(a.base.lat, 0.9)),
			fmtSigned(percentile(a.path.lat, 0.99)-percentile(a.base.lat, 0.99)))
	}
	fmt.Println()
}

// failedPaths reports whether any path had a stream fail.
func failedPaths(paths []*relayPath) bool {
	for _, p := range paths {
		if p.errs > 0 {
			return true
		}
	}
	return false
}
