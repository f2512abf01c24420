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
