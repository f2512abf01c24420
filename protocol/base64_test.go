package protocol

import (
	"bytes"
	"testing"
)

func TestDecodeBase64(t *testing.T) {
	want := []byte{0xfb, 0xff, 0xfe, 'a'}
	for _, s := range []string{"+//+YQ==", "+//+YQ", "-__-YQ==", "-__-YQ", "+//+YQ="} {
		got, ok := decodeBase64(s)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("decodeBase64(%q) = %v %v", s, got, ok)
		}
	}
	for _, s := range []string{"+_", "a", "QQ=x", "Q Q==", "%%"} {
		if _, ok := decodeBase64(s); ok {
			t.Errorf("decodeBase64(%q) accepted", s)
		}
	}
	if got := string(appendBase64(nil, want)); got != `"+//+YQ=="` {
		t.Errorf("appendBase64 = %s", got)
	}
}
