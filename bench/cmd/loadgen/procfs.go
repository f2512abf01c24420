package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// memKB reads a "VmXXX:   1234 kB" line of /proc/<pid>/status: VmRSS for
// the current resident set, VmHWM for its peak.
func memKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(k) != field {
			continue
		}
		f := strings.Fields(string(v))
		if len(f) == 0 {
			break
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("/proc/%d/status: no %s", pid, field)
}

// cpuTicks is the user+system CPU time of a process in clock ticks
// (/proc/<pid>/stat fields 14 and 15).
func cpuTicks(pid int) (int64, error) {
	if pid <= 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after it start
	// at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14, stime 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return u + s, nil
}

// clockTicks is USER_HZ; 100 on every Linux this runs on.
const clockTicks = 100

func fmtKB(kb int64) string {
	if kb <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f MB", float64(kb)/1024)
}
