package frames

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		sse  bool
		in   string
		want []string
		err  error
	}{
		{"ndjson", false, "{\"a\":1}\n\n{\"b\":2}\r\n{\"c\":3}", []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}, io.EOF},
		{"sse", true, ": hi\nid: 7\ndata: {\"a\":\ndata: 1}\n\nevent: x\r\ndata: two\r\n\r\n", []string{"{\"a\":\n1}", "two"}, io.EOF},
		{"sse cr", true, "data: one\r\rdata: two\r\r", []string{"one", "two"}, io.EOF},
		{"bom", false, "\xEF\xBB\xBF{}\n", []string{"{}"}, io.EOF},
		{"truncated", true, "data: one\n", nil, ErrTruncated},
		{"too large ndjson", false, strings.Repeat("x", 17) + "\n", nil, ErrTooLarge},
		{"too large sse", true, "data: " + strings.Repeat("x", 17) + "\n\n", nil, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.in), tc.sse, 16)
			var got []string
			var err error
			for {
				var b []byte
				if b, err = r.Next(); err != nil {
					break
				}
				got = append(got, string(b))
			}
			if !errors.Is(err, tc.err) || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q err %v, want %q err %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// A released reader's buffer serves the next stream; the released one
// reads nothing more.
func TestRelease(t *testing.T) {
	r := NewReader(strings.NewReader("data: one\n\n"), true, 1<<20)
	if b, err := r.Next(); err != nil || string(b) != "one" {
		t.Fatalf("%q %v", b, err)
	}
	r.Release()
	r.Release()
	if _, err := r.Next(); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("after release: %v", err)
	}
	r2 := NewReader(strings.NewReader("{\"a\":1}\n"), false, 1<<20)
	if b, err := r2.Next(); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("%q %v", b, err)
	}
}

// Ready is true exactly when the buffer holds a whole NDJSON line that is
// not blank, so that Next returns without reading; SSE never says ready.
func TestReady(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sse   bool
		input string
		want  []bool // Ready before each Next, then after the last
	}{
		{"two lines", false, "{\"a\":1}\n{\"b\":2}\n", []bool{false, true, false}},
		{"blank lines only after", false, "{\"a\":1}\n\n  \n", []bool{false, false}},
		{"a partial line", false, "{\"a\":1}\n{\"b\"", []bool{false, false}},
		{"crlf", false, "{\"a\":1}\r\n{\"b\":2}\r\n", []bool{false, true, false}},
		{"sse", true, "data: {}\n\ndata: {}\n\n", []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.input), tc.sse, 1<<10)
			defer r.Release()
			for i, want := range tc.want {
				if got := r.Ready(); got != want {
					t.Fatalf("Ready before Next %d = %v, want %v", i, got, want)
				}
				if i < len(tc.want)-1 {
					if _, err := r.Next(); err != nil {
						t.Fatalf("Next %d: %v", i, err)
					}
				}
			}
		})
	}
}
