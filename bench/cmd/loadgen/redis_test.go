package main

import (
	"bufio"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReadChunkUpdates runs the check of a stream's frames after its task
// frame (what replica A and B relay) on a correct stream and on streams
// wrong in one way each.
func TestReadChunkUpdates(t *testing.T) {
	closing := chunkFrame("t", "a", "", true, true)
	ok := []string{statusFrame("t", "TASK_STATE_WORKING"), chunkFrame("t", "a", "10", false, false),
		chunkFrame("t", "a", "20", true, false), closing, statusFrame("t", "TASK_STATE_COMPLETED")}
	with := func(i int, f string) []string {
		s := slices.Clone(ok)
		s[i] = f
		return s
	}
	for _, tc := range []struct {
		name    string
		frames  []string
		wantTS  []int64
		wantErr string // "" if the stream must pass
	}{
		{"ok", ok, []int64{10, 20}, ""},
		{"out of order", with(2, chunkFrame("t", "a", "10", true, false)), nil, "chunk 1: bad or out-of-order timestamp"},
		{"other task", with(1, chunkFrame("u", "a", "10", false, false)), nil, "unexpected artifact update"},
		{"chunk after closing", with(4, chunkFrame("t", "a", "30", true, false)), nil, "unexpected artifact update"},
		{"closing chunk with text", with(3, chunkFrame("t", "a", "x", true, true)), nil, "closing chunk"},
		{"second task frame", with(0, taskFrame("t")), nil, "task frame after the first"},
		{"failed", with(4, statusFrame("t", "TASK_STATE_FAILED")), nil, `status "TASK_STATE_FAILED"`},
		{"no closing chunk", slices.Delete(slices.Clone(ok), 3, 4), nil, "closing chunk seen: false"},
		{"no final status", ok[:4], nil, `ended in state ""`},
		{"frame after the end", append(slices.Clone(ok), statusFrame("t", "TASK_STATE_WORKING")), nil, "after the final status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sr := &sseReader{br: bufio.NewReader(strings.NewReader(strings.Join(tc.frames, "")))}
			ts, read, err := readChunkUpdates(sr, "t")
			if tc.wantErr == "" {
				if err != nil || !slices.Equal(ts, tc.wantTS) || len(read) != len(ts) {
					t.Fatalf("got %v (%d read times), %v; want %v", ts, len(read), err, tc.wantTS)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestReadRedisMemory asks a fake Redis that answers the three commands
// as redis-server 7 does, and one whose INFO lacks a field.
func TestReadRedisMemory(t *testing.T) {
	bulk := func(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
	mem := "# Memory\r\nused_memory:1234567\r\nused_memory_human:1.18M\r\nused_memory_rss:9000000\r\n"
	stats := "# Stats\r\ntotal_commands_processed:9\r\npubsub_channels:42\r\npubsub_patterns:0\r\n"
	for _, tc := range []struct {
		name    string
		answer  string
		want    redisMemory
		wantErr string
	}{
		{"redis 7", bulk(mem) + bulk(stats) + ":17\r\n", redisMemory{usedBytes: 1234567, keys: 17, channels: 42}, ""},
		{"no pubsub_channels", bulk(mem) + bulk("# Stats\r\n") + ":17\r\n", redisMemory{}, "no pubsub_channels"},
		{"an error for DBSIZE", bulk(mem) + bulk(stats) + "-ERR nope\r\n", redisMemory{}, "DBSIZE: unexpected answer"},
		{"an error for INFO", "-NOAUTH Authentication required.\r\n", redisMemory{}, "want a bulk string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			got := make(chan string, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					got <- err.Error()
					return
				}
				defer c.Close()
				want := "INFO memory\r\nINFO stats\r\nDBSIZE\r\n"
				b := make([]byte, len(want))
				_, _ = io.ReadFull(c, b)
				got <- string(b)
				_, _ = c.Write([]byte(tc.answer))
			}()
			m, err := readRedisMemory(ln.Addr().String())
			if req := <-got; req != "INFO memory\r\nINFO stats\r\nDBSIZE\r\n" {
				t.Fatalf("request %q", req)
			}
			if tc.wantErr == "" {
				if err != nil || m != tc.want {
					t.Fatalf("got %+v, %v; want %+v", m, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestRedisFlush: redisflush reads what the Redis held, then sends
// FLUSHALL on a second connection and fails unless it is answered +OK.
func TestRedisFlush(t *testing.T) {
	bulk := func(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
	info := bulk("used_memory:1048576\r\n") + bulk("pubsub_channels:0\r\n") + ":3\r\n"
	for _, tc := range []struct{ answer, wantErr string }{
		{"+OK\r\n", ""},
		{"-ERR unknown command 'FLUSHALL'\r\n", "FLUSHALL: unexpected answer"},
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 2)
		go func() {
			for i, answer := range []string{info, tc.answer} {
				c, err := ln.Accept()
				if err != nil {
					got <- err.Error()
					return
				}
				want := []string{"INFO memory\r\nINFO stats\r\nDBSIZE\r\n", "FLUSHALL\r\n"}[i]
				b := make([]byte, len(want))
				_, _ = io.ReadFull(c, b)
				got <- string(b)
				_, _ = c.Write([]byte(answer))
				c.Close()
			}
		}()
		err = cmdRedisFlush([]string{"-addr", ln.Addr().String()})
		ln.Close()
		if r := <-got; r != "INFO memory\r\nINFO stats\r\nDBSIZE\r\n" {
			t.Fatalf("first request %q", r)
		}
		if r := <-got; r != "FLUSHALL\r\n" {
			t.Fatalf("second request %q", r)
		}
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Fatalf("answer %q: err %v, want %q", tc.answer, err, tc.wantErr)
		}
	}
}
