package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The fuzz targets check that no input panics the decoders, that every
// error is a well-formed -32602/-32600/-32700 that renders to valid JSON in
// both versions, and that whatever decodes re-encodes to valid JSON and
// decodes back to the same message. Seeds live in testdata/fuzz/<name>,
// or in f.Add where they are generated (ids of a given size).

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := decodeRequest(body)
		if req == nil {
			t.Fatal("nil request")
		}
		if req.ID != nil {
			switch jsonwire.KindOf(req.ID) {
			case jsonwire.String, jsonwire.Number, jsonwire.Null:
			default:
				t.Fatalf("bad id kind %q", req.ID)
			}
		}
		for _, c := range []Codec{codecV03, codecV10} {
			var out []byte
			if e != nil {
				out = appendErrorResponse(nil, req.ID, c.AppendError(nil, e))
			} else {
				out = appendResult(nil, req.ID, []byte(`{}`))
			}
			if !json.Valid(out) {
				t.Fatalf("invalid response %s", out)
			}
		}
		if e != nil {
			switch e.Code {
			case CodeParseError, CodeInvalidRequest, CodeInvalidParams:
			default:
				t.Fatalf("unexpected code %d", e.Code)
			}
			if e.Code == CodeParseError && json.Valid(body) && utf8.Valid(body) {
				t.Fatalf("valid JSON reported as parse error: %q", body)
			}
			return
		}
		if !json.Valid(body) || req.Method == "" {
			t.Fatalf("accepted %q", body)
		}
		if req.Params != nil && (jsonwire.KindOf(req.Params) != jsonwire.Object || !json.Valid(req.Params)) {
			t.Fatalf("params %q", req.Params)
		}
	})
}

// FuzzDecodeEnvelope checks the envelope rules against encoding/json as
// an independent reader of the top-level members: a repeated envelope
// member, a missing id or an id over maxIDBytes is -32600 with id null and
// no method, and whatever is accepted names each envelope member once and
// echoes an id within the bound.
func FuzzDecodeEnvelope(f *testing.F) {
	big := strings.Repeat("x", 2046)
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"SendMessage","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"m\u0065thod":"GetTask","method":"SendMessage"}`,
		`{"jsonrpc":"2.0","id":1,"id":"2","method":"m"}`,
		`{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{},"params":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","x":1,"x":2}`,
		`{"jsonrpc":"2.0","method":"SendMessage","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"` + big + `","method":"m"}`,
		`{"jsonrpc":"2.0","id":"` + big[:maxIDBytes-2] + `","method":"m"}`,
		`{"jsonrpc":"2.0","id":` + strings.Repeat("7", maxIDBytes+1) + `,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"` + strings.Repeat(`\u00e9`, 200) + `","method":"m"}`,
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("\xff", 300) + `","method":"m"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := decodeRequest(body)
		counts, id, ok := topLevelMembers(body)
		if !ok {
			return // not a JSON object: FuzzDecodeRequest covers it
		}
		if !utf8.Valid(body) {
			// Not JSON text at all (jsonwire.Valid), whatever its members.
			if e == nil || e.Code != CodeParseError || req.ID != nil {
				t.Fatalf("want -32700 with id null for %q, got %v id %q", body, e, req.ID)
			}
			return
		}
		dup := counts["jsonrpc"] > 1 || counts["method"] > 1 || counts["params"] > 1 || counts["id"] > 1
		if !dup && counts["id"] == 0 {
			// Without an id: refused, id null; a well-formed one last, as
			// a notification (NoID) with its method read.
			if e == nil || req.ID != nil || (req.NoID && (e.Code != CodeInvalidRequest || req.Method == "")) {
				t.Fatalf("want a refusal with id null for %q, got %v id %q method %q NoID %v", body, e, req.ID, req.Method, req.NoID)
			}
			return
		}
		refused := dup || len(id) > maxIDBytes
		if refused {
			if e == nil || e.Code != CodeInvalidRequest || req.ID != nil || req.Method != "" {
				t.Fatalf("want -32600 with id null and no method for %q, got %v id %q method %q", body, e, req.ID, req.Method)
			}
			if !dup && len(id) > maxIDBytes && (e.Metadata["limit"] != LimitMaxIDBytes || e.Metadata["max"] != "1024") {
				t.Fatalf("oversized id error without its limit: %+v", e)
			}
			return
		}
		if e == nil && (len(req.ID) == 0 || len(id) > maxIDBytes) {
			t.Fatalf("accepted id %q (sent %q)", req.ID, id)
		}
	})
}

// topLevelMembers reads the members of the JSON object body with
// encoding/json: how often each name occurs (names unquoted) and the last
// id as sent. ok is false when body is not one valid JSON object.
func topLevelMembers(body []byte) (counts map[string]int, id json.RawMessage, ok bool) {
	if !json.Valid(body) {
		return nil, nil, false
	}
	d := json.NewDecoder(bytes.NewReader(body))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	counts = map[string]int{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, false
		}
		name := tok.(string)
		counts[name]++
		if name == "id" {
			id = v
		}
	}
	return counts, id, true
}

func FuzzDecodeSendV03(f *testing.F) {
	f.Add([]byte(`{"message":` + v03Msg + `}`))
	f.Fuzz(func(t *testing.T, params []byte) { fuzzSend(t, codecV03.(dialectCodec), params) })
}

func FuzzDecodeSendV10(f *testing.F) {
	f.Add([]byte(`{"message":` + v10Msg + `}`))
	f.Fuzz(func(t *testing.T, params []byte) { fuzzSend(t, codecV10.(dialectCodec), params) })
}

// FuzzDuplicateMembers: whatever send params decode, giving any member of
// the params or of the message a second time (the same value, or null) makes
// them -32602 naming that member.
func FuzzDuplicateMembers(f *testing.F) {
	f.Add([]byte(`{"message":`+v10Msg+`}`), uint8(0), true, false)
	f.Add([]byte(`{"message":`+v03Msg+`,"metadata":{"a":1}}`), uint8(3), false, true)
	f.Add([]byte(`{"configuration":{"blocking":false},"message":`+v03Msg+`}`), uint8(1), false, false)
	f.Fuzz(func(t *testing.T, params []byte, pick uint8, inMessage, asNull bool) {
		for _, c := range []Codec{codecV03, codecV10} {
			if _, err := c.DecodeSend(params); err != nil {
				continue
			}
			obj := jsonwire.TrimSpace(params)
			field := ""
			if inMessage {
				var msg []byte
				it := jsonwire.NewObjIter(obj)
				for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
					if string(key) == "message" {
						msg = val
					}
				}
				obj, field = msg, "message"
			}
			var keys, vals [][]byte
			it := jsonwire.NewObjIter(obj)
			for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
				keys, vals = append(keys, key), append(vals, val)
			}
			if len(keys) == 0 {
				continue
			}
			i := int(pick) % len(keys)
			val := vals[i]
			if asNull {
				val = []byte("null")
			}
			// The copy goes right after the opening brace of obj.
			at := bytes.Index(params, obj) + 1
			dup := append(jsonwire.AppendString(nil, string(keys[i])), ':')
			dup = append(append(dup, val...), ',')
			doubled := append(append(append([]byte{}, params[:at]...), dup...), params[at:]...)
			_, err := c.DecodeSend(doubled)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidParams {
				t.Fatalf("a repeated %q decoded (%v):\n%s", keys[i], err, doubled)
			}
			if want := join(field, string(keys[i])); len(e.Violations) == 0 || e.Violations[0].Field != want {
				t.Fatalf("repeated %q: violations %+v, want field %q", keys[i], e.Violations, want)
			}
		}
	})
}

func fuzzSend(t *testing.T, c dialectCodec, params []byte) {
	checkSmallLimits(t, c.d.version, params)
	p, err := c.DecodeSend(params)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidParams || len(e.Violations) == 0 || p != nil {
			t.Fatalf("bad error %#v / %v", err, p)
		}
		for _, c := range []Codec{codecV03, codecV10} {
			if out := c.AppendError(nil, e); !json.Valid(out) {
				t.Fatalf("invalid error JSON %s", out)
			}
		}
		return
	}
	m := p.Message
	if m.ID == "" || m.Role != RoleUser || len(m.Parts) == 0 {
		t.Fatalf("invalid message accepted: %+v", m)
	}
	enc := appendMessage(c.d, nil, &m)
	if !json.Valid(enc) || bytes.ContainsAny(enc, "\r\n") {
		t.Fatalf("invalid encoding %q", enc)
	}
	// Everything else in the params must encode as well.
	task := Task{ID: "t", History: []Message{m}, Metadata: p.Metadata, Status: TaskStatus{State: StateWorking, Message: &m}}
	if out := c.AppendTask(nil, &task); !json.Valid(out) {
		t.Fatalf("invalid task encoding %q", out)
	}
	back, e := decodeMessage(c.d, enc, "message")
	if e != nil {
		t.Fatalf("re-decode failed: %v\n%s", e, enc)
	}
	normalise(&m)
	normalise(&back)
	if !reflect.DeepEqual(m, back) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v\n json %s", back, m, enc)
	}
}

// normalise puts raw JSON members into the form the encoder writes, so a
// round trip compares values rather than whitespace.
func normalise(m *Message) {
	n := func(r json.RawMessage) json.RawMessage {
		if r == nil {
			return nil
		}
		return jsonwire.AppendRaw(nil, r)
	}
	m.Metadata = n(m.Metadata)
	for i := range m.Parts {
		m.Parts[i].Metadata = n(m.Parts[i].Metadata)
		m.Parts[i].Data = n(m.Parts[i].Data)
	}
}

// checkSmallLimits decodes params under tight limits: whatever is accepted
// must be within them, and a refusal must be a well-formed -32602.
func checkSmallLimits(t *testing.T, v Version, params []byte) {
	p, err := NewCodec(v, small).DecodeSend(params)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidParams || len(e.Violations) == 0 {
			t.Fatalf("bad limited error %#v", err)
		}
		return
	}
	m := &p.Message
	if len(m.Parts) > small.MaxParts || len(m.Metadata) > small.MaxMetadataBytes || len(p.Metadata) > small.MaxMetadataBytes {
		t.Fatalf("limits not enforced: %+v", p)
	}
	for _, pt := range m.Parts {
		if len(pt.Text) > small.MaxTextBytes || len(pt.Raw) > small.MaxFileBytes || len(pt.Metadata) > small.MaxMetadataBytes {
			t.Fatalf("part limits not enforced: %+v", pt)
		}
	}
}
