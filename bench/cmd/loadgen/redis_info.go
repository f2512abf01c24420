package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// redisMemory is what the sends command samples of a Redis beside a
// process's resident set: the bytes Redis's allocator holds for data
// (INFO memory used_memory), the keys of its database 0 (DBSIZE) and the
// channels subscribed to (INFO stats pubsub_channels): the module
// subscribes to a channel per task it watches and drops the idle ones at a
// sweep.
type redisMemory struct {
	usedBytes int64
	keys      int64
	channels  int64
}

// readRedisMemory asks the Redis at addr (host:port, no password: the
// bench's own redis-server) for INFO memory, INFO stats and DBSIZE on one
// connection.
func readRedisMemory(addr string) (redisMemory, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return redisMemory{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "INFO memory\r\nINFO stats\r\nDBSIZE\r\n"); err != nil {
		return redisMemory{}, err
	}
	br := bufio.NewReader(c)
	info, err := readBulk(br)
	if err != nil {
		return redisMemory{}, err
	}
	var m redisMemory
	if m.usedBytes, err = infoField(info, "used_memory"); err != nil {
		return redisMemory{}, err
	}
	stats, err := readBulk(br)
	if err != nil {
		return redisMemory{}, err
	}
	if m.channels, err = infoField(stats, "pubsub_channels"); err != nil {
		return redisMemory{}, err
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return redisMemory{}, err
	}
	if len(line) < 3 || line[0] != ':' {
		return redisMemory{}, fmt.Errorf("DBSIZE: unexpected answer %.80q", line)
	}
	if m.keys, err = strconv.ParseInt(string(bytes.TrimSpace([]byte(line[1:]))), 10, 64); err != nil {
		return redisMemory{}, fmt.Errorf("DBSIZE: %w", err)
	}
	return m, nil
}

// readBulk reads one RESP bulk string ($<n>\r\n<n bytes>\r\n).
func readBulk(br *bufio.Reader) ([]byte, error) {
	head, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(head) < 3 || head[0] != '$' {
		return nil, fmt.Errorf("redis: want a bulk string, got %.80q", head)
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace([]byte(head[1:]))))
	if err != nil || n < 0 {
		return nil, fmt.Errorf("redis: bad bulk length %.80q", head)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(br, b); err != nil {
		return nil, err
	}
	return b[:n], nil
}

// infoField reads the integer field name of an INFO answer (name:value
// lines).
func infoField(info []byte, name string) (int64, error) {
	for _, line := range bytes.Split(info, []byte("\n")) {
		k, v, ok := bytes.Cut(bytes.TrimRight(line, "\r"), []byte(":"))
		if ok && string(k) == name {
			return strconv.ParseInt(string(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("redis INFO: no %s", name)
}

// redisRow is the Redis side of one target of the sends command.
type redisRow struct {
	name    string
	before  redisMemory
	samples []redisMemory
	err     error
}

// printRedisSamples prints the Redis beside each target of the sends
// command: its used_memory and keys at the same checkpoints as the RSS,
// and whether the memory is flat over the same share of the run.
func printRedisSamples(rows []redisRow, samples int, from float64) {
	fmt.Printf("### Redis beside it: INFO memory used_memory, DBSIZE and pubsub_channels at the same 1/%d checkpoints\n\n", samples)
	fmt.Printf("| target | used_memory before | used_memory at each 1/%d (MB) | change over the last %.0f%% | keys before | keys at each 1/%d | channels subscribed at each 1/%d | errors |\n",
		samples, (1-from)*100, samples, samples)
	fmt.Println("|---|---:|---|---:|---:|---|---|---|")
	for _, r := range rows {
		var mem, keys, chans []string
		var kb []int64
		for _, s := range r.samples {
			mem = append(mem, fmt.Sprintf("%.1f", float64(s.usedBytes)/(1<<20)))
			keys = append(keys, strconv.FormatInt(s.keys, 10))
			chans = append(chans, strconv.FormatInt(s.channels, 10))
			kb = append(kb, s.usedBytes/1024)
		}
		errs := "0"
		if r.err != nil {
			errs = fmt.Sprintf("**FAIL**: %.120v", r.err)
		}
		fmt.Printf("| %s | %s | %s | %s | %d | %s | %s | %s |\n", r.name, fmtKB(r.before.usedBytes/1024),
			strings.Join(mem, " · "), flatness(kb, from), r.before.keys, strings.Join(keys, " · "), strings.Join(chans, " · "), errs)
	}
	fmt.Println()
}

// redisHeld is what a relay table's title says of the Redis at addr when
// its run begins: how many keys and bytes it held. Its tail latency
// depends on it (BENCHMARKS.md: the same chunks through a Redis holding
// a gigabyte of other keys). Empty for no addr; an error is said.
func redisHeld(addr string) string {
	if addr == "" {
		return ""
	}
	m, err := readRedisMemory(addr)
	if err != nil {
		return fmt.Sprintf(" (Redis: %v)", err)
	}
	return fmt.Sprintf(", Redis holding %d keys (used_memory %.1f MB) as it began", m.keys, float64(m.usedBytes)/(1<<20))
}

// cmdRedisFlush empties the bench's own Redis at -addr (FLUSHALL), so
// that a measurement after the load rounds starts from what it writes
// itself; it prints what the Redis held before, to stderr.
func cmdRedisFlush(args []string) error {
	fs := newFlags("redisflush")
	addr := fs.String("addr", "", "host:port of the bench's redis-server (no password)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" {
		return fmt.Errorf("-addr is required")
	}
	m, err := readRedisMemory(*addr)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", *addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, "FLUSHALL\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+OK\r\n" {
		return fmt.Errorf("FLUSHALL: unexpected answer %.80q", line)
	}
	logf("redisflush: %s held %d keys (used_memory %.1f MB), now none", *addr, m.keys, float64(m.usedBytes)/(1<<20))
	return nil
}
