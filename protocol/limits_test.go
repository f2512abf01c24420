package protocol

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// small are limits a test can reach with short inputs.
var small = Limits{MaxParts: 2, MaxTextBytes: 8, MaxFileBytes: 6, MaxMetadataBytes: 16}

// wantLimit checks err is the -32602 of limit at field, and that both
// renderings carry the limit's name and value where a client looks: 1.0
// in ErrorInfo metadata plus a BadRequest field violation, 0.3 in the data
// object.
func wantLimit(t *testing.T, err error, field, limit, max string) {
	t.Helper()
	wantInvalid(t, err, field)
	var e *Error
	errors.As(err, &e)
	if !strings.Contains(e.Message, limit) || !strings.Contains(e.Violations[0].Description, limit) {
		t.Fatalf("error does not name the limit %s: %+v", limit, e)
	}
	if e.Metadata["limit"] != limit || e.Metadata["max"] != max {
		t.Fatalf("metadata %v, want limit %s max %s", e.Metadata, limit, max)
	}
	var v10 struct {
		Code int
		Data []struct {
			Type            string `json:"@type"`
			Reason          string
			Domain          string
			Metadata        map[string]string
			FieldViolations []FieldViolation
		}
	}
	if err := json.Unmarshal(codecV10.AppendError(nil, e), &v10); err != nil {
		t.Fatal(err)
	}
	if v10.Code != CodeInvalidParams || len(v10.Data) != 2 ||
		v10.Data[0].Type != typeErrorInfo || v10.Data[0].Reason != "INVALID_PARAMS" || v10.Data[0].Domain != ErrorDomain ||
		v10.Data[0].Metadata["limit"] != limit || v10.Data[0].Metadata["max"] != max ||
		v10.Data[1].Type != typeBadRequest || len(v10.Data[1].FieldViolations) != 1 || v10.Data[1].FieldViolations[0].Field != field {
		t.Fatalf("1.0 error %+v", v10)
	}
	// 0.3 errors carry no data (see appendErrorV03): the message names the
	// limit and the field instead.
	var v03 map[string]any
	if err := json.Unmarshal(codecV03.AppendError(nil, e), &v03); err != nil {
		t.Fatal(err)
	}
	msg, _ := v03["message"].(string)
	if v03["code"] != float64(CodeInvalidParams) || v03["data"] != nil ||
		!strings.Contains(msg, limit) || !strings.Contains(msg, field) {
		t.Fatalf("0.3 error %v", v03)
	}
}

// partsV10 / partsV03 build send params whose message holds parts.
func paramsV10(parts string, extra string) string {
	return `{"message":{"messageId":"m","role":"ROLE_USER","parts":[` + parts + `]` + extra + `}}`
}

func paramsV03(parts string, extra string) string {
	return `{"message":{"kind":"message","messageId":"m","role":"user","parts":[` + parts + `]` + extra + `}}`
}

func repeatJoin(s string, n int) string {
	return strings.TrimSuffix(strings.Repeat(s+",", n), ",")
}

func TestLimits(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	tests := []struct {
		name   string
		v      Version
		params string
		// field and limit are the violation expected; "" = accepted.
		field, limit, max string
	}{
		{"v10 parts at limit", V10, paramsV10(repeatJoin(`{"text":"a"}`, 2), ""), "", "", ""},
		{"v10 parts over limit", V10, paramsV10(repeatJoin(`{"text":"a"}`, 3), ""), "message.parts", LimitMaxParts, "2"},
		{"v03 parts over limit", V03, paramsV03(repeatJoin(`{"kind":"text","text":"a"}`, 3), ""), "message.parts", LimitMaxParts, "2"},
		// The part over the limit is not even looked at.
		{"v10 part over limit not decoded", V10, paramsV10(`{"text":"a"},{"text":"b"},{"bogus":1}`, ""), "message.parts", LimitMaxParts, "2"},

		{"v10 text at limit", V10, paramsV10(`{"text":"12345678"}`, ""), "", "", ""},
		{"v10 text over limit", V10, paramsV10(`{"text":"123456789"}`, ""), "message.parts[0].text", LimitMaxTextBytes, "8"},
		// Bytes of the text, not of its JSON escapes: é is two bytes.
		{"v10 text escapes counted decoded", V10, paramsV10(`{"text":"\u00e9\u00e9\u00e9\u00e9"}`, ""), "", "", ""},
		{"v10 text multibyte over", V10, paramsV10(`{"text":"ééééé"}`, ""), "message.parts[0].text", LimitMaxTextBytes, "8"},
		{"v03 text over limit", V03, paramsV03(`{"kind":"text","text":"a"},{"kind":"text","text":"123456789"}`, ""), "message.parts[1].text", LimitMaxTextBytes, "8"},

		{"v10 file at limit", V10, paramsV10(`{"raw":"`+b64(6)+`"}`, ""), "", "", ""},
		{"v10 file over limit", V10, paramsV10(`{"raw":"`+b64(7)+`"}`, ""), "message.parts[0].raw", LimitMaxFileBytes, "6"},
		{"v10 file unpadded over", V10, paramsV10(`{"raw":"`+strings.TrimRight(b64(7), "=")+`"}`, ""), "message.parts[0].raw", LimitMaxFileBytes, "6"},
		{"v10 file url-safe at limit", V10, paramsV10(`{"raw":"`+base64.RawURLEncoding.EncodeToString([]byte{0xfb, 0xff, 0xfe, 1, 2, 3})+`"}`, ""), "", "", ""},
		// Sized before decoding: invalid base64 over the limit is a limit
		// error, not a decoding one.
		{"v10 file sized before decoding", V10, paramsV10(`{"raw":"!!!!!!!!!!!!!!!!"}`, ""), "message.parts[0].raw", LimitMaxFileBytes, "6"},
		{"v03 file over limit", V03, paramsV03(`{"kind":"file","file":{"bytes":"`+b64(9)+`","mimeType":"a/b"}}`, ""), "message.parts[0].file.bytes", LimitMaxFileBytes, "6"},
		// URL parts are references, never fetched: no size applies.
		{"v10 url not bounded", V10, paramsV10(`{"url":"https://files.example/`+strings.Repeat("x", 100)+`"}`, ""), "", "", ""},
		{"v03 uri not bounded", V03, paramsV03(`{"kind":"file","file":{"uri":"https://files.example/`+strings.Repeat("x", 100)+`"}}`, ""), "", "", ""},

		{"v10 message metadata at limit", V10, paramsV10(`{"text":"a"}`, `,"metadata":{"k":"12345678"}`), "", "", ""},
		{"v10 message metadata over", V10, paramsV10(`{"text":"a"}`, `,"metadata":{"k":"1234567890"}`), "message.metadata", LimitMaxMetadataBytes, "16"},
		{"v03 message metadata over", V03, paramsV03(`{"kind":"text","text":"a"}`, `,"metadata":{"k":"1234567890"}`), "message.metadata", LimitMaxMetadataBytes, "16"},
		{"v10 part metadata over", V10, paramsV10(`{"text":"a","metadata":{"k":"1234567890"}}`, ""), "message.parts[0].metadata", LimitMaxMetadataBytes, "16"},
		{"v03 part metadata over", V03, paramsV03(`{"kind":"text","text":"a","metadata":{"k":"1234567890"}}`, ""), "message.parts[0].metadata", LimitMaxMetadataBytes, "16"},
		{"v10 params metadata over", V10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a"}]},"metadata":{"k":"1234567890"}}`, "metadata", LimitMaxMetadataBytes, "16"},
		// Whitespace as sent counts: the limit is on the bytes received.
		{"v10 metadata whitespace counts", V10, paramsV10(`{"text":"a"}`, `,"metadata":{"k" :  "12345678"}`), "message.metadata", LimitMaxMetadataBytes, "16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewCodec(tt.v, small).DecodeSend(json.RawMessage(tt.params))
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p == nil || len(p.Message.Parts) == 0 {
					t.Fatalf("params %+v", p)
				}
				return
			}
			if p != nil {
				t.Fatalf("params returned with the error: %+v", p)
			}
			wantLimit(t, err, tt.field, tt.limit, tt.max)
		})
	}
}

func TestLimitsTaskIDMetadata(t *testing.T) {
	for _, v := range []Version{V03, V10} {
		_, err := NewCodec(v, small).DecodeTaskID(json.RawMessage(`{"id":"t","metadata":{"k":"1234567890"}}`))
		wantLimit(t, err, "metadata", LimitMaxMetadataBytes, "16")
		if _, err := NewCodec(v, small).DecodeTaskID(json.RawMessage(`{"id":"t","metadata":{"k":"1"}}`)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLimitsFileDecodedExactly(t *testing.T) {
	raw := []byte{0, 1, 2, 0xfe, 0xff, 9}
	p, err := NewCodec(V10, small).DecodeSend(json.RawMessage(paramsV10(`{"raw":"`+base64.StdEncoding.EncodeToString(raw)+`"}`, "")))
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Message.Parts[0].Raw) != string(raw) {
		t.Fatalf("raw %v", p.Message.Parts[0].Raw)
	}
}

func TestDefaultLimits(t *testing.T) {
	if got := (Limits{}).WithDefaults(); got != DefaultLimits() {
		t.Fatalf("zero limits → %+v", got)
	}
	if got := (Limits{MaxParts: 3}).WithDefaults(); got.MaxParts != 3 || got.MaxTextBytes != DefaultMaxTextBytes {
		t.Fatalf("partial limits → %+v", got)
	}
	want := Limits{MaxParts: 64, MaxTextBytes: 1 << 20, MaxFileBytes: 4 << 20, MaxMetadataBytes: 64 << 10}
	if DefaultLimits() != want {
		t.Fatalf("defaults %+v", DefaultLimits())
	}
	// The package codecs and a codec with zero limits enforce the defaults.
	for _, c := range []Codec{codecV10, NewCodec(V10, Limits{})} {
		if _, err := c.DecodeSend(json.RawMessage(paramsV10(repeatJoin(`{"text":"a"}`, 64), ""))); err != nil {
			t.Fatalf("64 parts refused: %v", err)
		}
		_, err := c.DecodeSend(json.RawMessage(paramsV10(repeatJoin(`{"text":"a"}`, 65), "")))
		wantLimit(t, err, "message.parts", LimitMaxParts, "64")
		_, err = c.DecodeSend(json.RawMessage(paramsV10(`{"text":"`+strings.Repeat("x", 1<<20+1)+`"}`, "")))
		wantLimit(t, err, "message.parts[0].text", LimitMaxTextBytes, "1048576")
		_, err = c.DecodeSend(json.RawMessage(paramsV10(`{"raw":"`+b64Len(4<<20+1)+`"}`, "")))
		wantLimit(t, err, "message.parts[0].raw", LimitMaxFileBytes, "4194304")
		_, err = c.DecodeSend(json.RawMessage(paramsV10(`{"text":"a"}`, `,"metadata":{"k":"`+strings.Repeat("x", 64<<10)+`"}`)))
		wantLimit(t, err, "message.metadata", LimitMaxMetadataBytes, "65536")
	}
	if NewCodec(Version(9), Limits{}) != nil {
		t.Fatal("codec for an unknown version")
	}
}

// b64Len is a base64 text (all 'A') that decodes to n bytes.
func b64Len(n int) string { return strings.Repeat("A", base64.RawStdEncoding.EncodedLen(n)) }

func TestLimitsValidate(t *testing.T) {
	if err := (Limits{}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := (Limits{MaxFileBytes: -1}).Validate()
	if err == nil || !strings.Contains(err.Error(), LimitMaxFileBytes) {
		t.Fatalf("negative limit: %v", err)
	}
}

// An oversized inline file is refused without allocating its decoded
// size, nor even a copy of its text: the check runs on the base64 length.
func TestLimitsFileNotDecoded(t *testing.T) {
	c := NewCodec(V10, Limits{MaxFileBytes: 1 << 10})
	for _, field := range []string{"raw", "bytes"} {
		var params json.RawMessage
		if field == "raw" {
			params = json.RawMessage(paramsV10(`{"raw":"`+b64Len(8<<20)+`"}`, ""))
		} else {
			c = NewCodec(V03, Limits{MaxFileBytes: 1 << 10})
			params = json.RawMessage(paramsV03(`{"kind":"file","file":{"bytes":"`+b64Len(8<<20)+`"}}`, ""))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := c.DecodeSend(params)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("accepted")
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Fatalf("%s: refusing an 8 MiB file allocated %d bytes", field, n)
		}
	}
}

func TestDecodeRequestDepthNamesLimit(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":{}}}}`)
	_, e := DecodeRequestLimit(body, 3)
	if e == nil || e.Code != CodeInvalidRequest || !strings.Contains(e.Message, LimitMaxJSONDepth) ||
		e.Metadata["limit"] != LimitMaxJSONDepth || e.Metadata["max"] != "3" {
		t.Fatalf("depth error %+v", e)
	}
}

// TestIdentifierBounds: every identifier a caller chooses is bounded in
// size (max_identifier_size) and every array of them in count
// (max_identifiers), in both versions, naming the field; at the bound it
// passes.
func TestIdentifierBounds(t *testing.T) {
	long := `"` + strings.Repeat("x", maxIdentifierBytes+1) + `"`
	atBound := `"` + strings.Repeat("x", maxIdentifierBytes) + `"`
	escapedLong := `"` + strings.Repeat(`\u0078`, maxIdentifierBytes+1) + `"`
	ids := func(n int) string { return "[" + repeatJoin(`"t"`, n) + "]" }
	text10, text03 := `{"text":"hi"}`, `{"kind":"text","text":"hi"}`
	size, count := limitMaxIdentifierBytes, limitMaxIdentifiers
	max, maxN := "256", "64"
	for _, c := range []struct {
		name, method string
		v            Version
		params       string
		field, limit string // "" : accepted
	}{
		{"contextId", "send", V10, paramsV10(text10, `,"contextId":`+long), "message.contextId", size},
		{"contextId escaped", "send", V10, paramsV10(text10, `,"contextId":`+escapedLong), "message.contextId", size},
		{"contextId at the bound", "send", V10, paramsV10(text10, `,"contextId":`+atBound), "", ""},
		{"messageId 0.3", "send", V03, `{"message":{"kind":"message","messageId":` + long + `,"role":"user","parts":[` + text03 + `]}}`, "message.messageId", size},
		{"taskId", "send", V10, paramsV10(text10, `,"taskId":`+long), "message.taskId", size},
		{"referenceTaskIds count", "send", V10, paramsV10(text10, `,"referenceTaskIds":`+ids(maxIdentifiers+1)), "message.referenceTaskIds", count},
		{"referenceTaskIds at the bound", "send", V10, paramsV10(text10, `,"referenceTaskIds":`+ids(maxIdentifiers)), "", ""},
		{"referenceTaskIds size", "send", V03, paramsV03(text03, `,"referenceTaskIds":["a",`+long+`]`), "message.referenceTaskIds[1]", size},
		{"extensions", "send", V10, paramsV10(text10, `,"extensions":[`+long+`]`), "message.extensions[0]", size},
		{"acceptedOutputModes", "send", V10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[` + text10 + `]},"configuration":{"acceptedOutputModes":` + ids(maxIdentifiers+1) + `}}`, "configuration.acceptedOutputModes", count},
		{"tenant", "send", V10, `{"tenant":` + long + `,"message":{"messageId":"m","role":"ROLE_USER","parts":[` + text10 + `]}}`, "tenant", size},
		{"get id", "get", V10, `{"id":` + long + `}`, "id", size},
		{"cancel id", "cancel", V03, `{"id":` + long + `}`, "id", size},
		{"list contextId", "list", V10, `{"contextId":` + long + `}`, "contextId", size},
		{"list pageToken", "list", V10, `{"pageToken":` + long + `}`, "pageToken", size},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := decodeParams(codecFor(c.v), c.method, c.params)
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused at the bound: %v", err)
				}
				return
			}
			want := max
			if c.limit == count {
				want = maxN
			}
			wantLimit(t, err, c.field, c.limit, want)
		})
	}
}
