// Package jsontest reads decoded JSON in tests: a value is walked along a
// path of object keys and array indexes, and a missing step fails the
// test with the path in its message.
package jsontest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Decode decodes one JSON object, numbers kept as json.Number; it
// fails the test on bad JSON.
func Decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("bad JSON %q: %v", b, err)
	}
	return m
}

// At walks a decoded JSON value along path (object keys and array
// indexes); it fails the test when the path does not exist.
func At(t testing.TB, v any, path ...any) any {
	t.Helper()
	cur := v
	for i, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("path %v: %v is not an object at %d", path, cur, i)
			}
			if cur, ok = m[k]; !ok {
				t.Fatalf("path %v: no member %q in %v", path, k, m)
			}
		case int:
			a, ok := cur.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("path %v: no index %d in %v", path, k, cur)
			}
			cur = a[k]
		}
	}
	return cur
}

// Str is the string at path; it fails the test if there is none.
func Str(t testing.TB, v any, path ...any) string {
	t.Helper()
	s, ok := At(t, v, path...).(string)
	if !ok {
		t.Fatalf("path %v is not a string: %v", path, At(t, v, path...))
	}
	return s
}

// Has reports whether path exists in v.
func Has(v any, path ...any) bool {
	cur := v
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if cur, ok = m[k]; !ok {
				return false
			}
		case int:
			a, ok := cur.([]any)
			if !ok || k >= len(a) {
				return false
			}
			cur = a[k]
		}
	}
	return true
}
