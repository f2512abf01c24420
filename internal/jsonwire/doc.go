// Package jsonwire is the module's low-level JSON: a validator that also
// measures nesting depth, scanners that walk a validated document without
// decoding it (values come out as sub-slices of the input), and the
// appenders every hand-written encoder shares, so that protocol, upstream
// and handler escape strings and check raw values the one same way.
//
// It knows nothing of A2A: names, field paths and error codes belong to
// the packages above it. It exists because encoding/json (v1) can neither
// walk a document without allocating nor report depth in the same pass;
// encoding/json/v2's jsontext (Value.IsValid, Decoder.ReadToken,
// AppendQuote) does all of this, so once that package is part of the
// standard library by default, this one is the part to replace by it.
// The behaviour to keep across that change is pinned by the tests here,
// each against encoding/json as the reference.
package jsonwire
