package jsonwire

import "testing"

func TestScannersTolerateMalformedInput(t *testing.T) {
	for _, in := range []string{`{`, `{"a"`, `{"a":`, `{"a":1`, `{"a" 1}`, `{1:2}`, `{"a":"x`, `[1,`, `[`, `{"a":[}`, `{"a\":1}`} {
		it := NewObjIter([]byte(in))
		for n := 0; n < 10; n++ {
			if _, _, ok := it.Next(); !ok {
				break
			}
		}
		ai := NewArrIter([]byte(in))
		for n := 0; n < 10; n++ {
			if _, ok := ai.Next(); !ok {
				break
			}
		}
	}
}
