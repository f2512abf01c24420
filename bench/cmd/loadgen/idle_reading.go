package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// reading is the server's memory at one moment, in KB.
type reading struct {
	rss int64
	// Only with an admin URL: after a forced GC.
	gcRSS, heap, stack int64
	// goroutines is how many the server runs, read after the GC (admin
	// URL only): what a stream costs in stacks depends on how many it
	// parks and how deep.
	goroutines int64
}

// takeReading waits settle and reads the RSS; with an admin URL it then
// forces a GC, waits settle again for the scavenger, and reads the RSS, the
// Go heap and stack in use and the number of goroutines.
func takeReading(pid int, admin string, settle time.Duration) (reading, error) {
	var r reading
	time.Sleep(settle)
	var err error
	if r.rss, err = memKB(pid, "VmRSS"); err != nil || admin == "" {
		return r, err
	}
	if err := adminGet(admin+"/debug/pprof/heap?gc=1", nil); err != nil {
		return r, err
	}
	time.Sleep(settle)
	if r.gcRSS, err = memKB(pid, "VmRSS"); err != nil {
		return r, err
	}
	var vars struct {
		Memstats struct {
			HeapAlloc  int64
			StackInuse int64
		} `json:"memstats"`
	}
	if err := adminGet(admin+"/debug/vars", &vars); err != nil {
		return r, err
	}
	r.heap, r.stack = vars.Memstats.HeapAlloc>>10, vars.Memstats.StackInuse>>10
	r.goroutines, err = goroutineCount(admin)
	return r, err
}

// goroutineCount reads the total of the admin API's goroutine profile
// (its first line: "goroutine profile: total N").
func goroutineCount(admin string) (int64, error) {
	u := admin + "/debug/pprof/goroutine?debug=1"
	resp, err := http.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", u, err)
	}
	n, ok := strings.CutPrefix(strings.TrimSpace(line), "goroutine profile: total ")
	if !ok {
		return 0, fmt.Errorf("GET %s: first line %q", u, line)
	}
	// The rest of the profile is not needed.
	_, _ = io.Copy(io.Discard, resp.Body)
	return strconv.ParseInt(n, 10, 64)
}

// adminGet GETs an admin URL and decodes its JSON into v (nil: discard).
func adminGet(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	if v == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// adminSave GETs an admin URL into a file.
func adminSave(u, file string) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
