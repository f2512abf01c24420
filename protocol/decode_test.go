package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// wantInvalid checks err is a -32602 *Error whose first violation names
// field.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error naming %q, got %v", field, err)
	}
	if e.Code != CodeInvalidParams {
		t.Fatalf("code = %d, want -32602 (%s)", e.Code, e.Message)
	}
	if len(e.Violations) == 0 || e.Violations[0].Field != field {
		t.Fatalf("violations = %+v, want field %q", e.Violations, field)
	}
	if e.Violations[0].Description == "" || !strings.Contains(e.Message, field) {
		t.Fatalf("unhelpful error %+v", e)
	}
	// Whatever the version, the rendered error is valid JSON.
	for _, c := range []Codec{codecV03, codecV10} {
		if out := c.AppendError(nil, e); !json.Valid(out) {
			t.Fatalf("invalid error JSON %s", out)
		}
	}
}

func intp(n int) *int { return &n }

const (
	v03Msg = `{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}`
	v10Msg = `{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}`
)

func TestDecodeSendErrors(t *testing.T) {
	tests := []struct {
		name   string
		codec  Codec
		params string
		field  string
	}{
		// Shared rules, both versions.
		{"v03 no params", codecV03, ``, "message"},
		{"v10 no params", codecV10, ``, "message"},
		{"v03 null params", codecV03, `null`, "message"},
		{"v10 empty params", codecV10, `{}`, "message"},
		{"v10 null message", codecV10, `{"message":null}`, "message"},
		{"v03 params array", codecV03, `[1]`, "params"},
		{"v10 params malformed", codecV10, `{"message":`, "params"},
		{"v03 message not object", codecV03, `{"message":"hi"}`, "message"},
		{"v10 message not object", codecV10, `{"message":[]}`, "message"},
		{"v03 no parts", codecV03, `{"message":{"messageId":"m","role":"user"}}`, "message.parts"},
		{"v10 empty parts", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}`, "message.parts"},
		{"v03 parts not array", codecV03, `{"message":{"messageId":"m","role":"user","parts":{}}}`, "message.parts"},
		{"v03 missing messageId", codecV03, `{"message":{"role":"user","parts":[{"kind":"text","text":"x"}]}}`, "message.messageId"},
		{"v10 empty messageId", codecV10, `{"message":{"messageId":"","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "message.messageId"},
		{"v10 messageId number", codecV10, `{"message":{"messageId":5,"role":"ROLE_USER","parts":[{"text":"x"}]}}`, "message.messageId"},
		{"v03 missing role", codecV03, `{"message":{"messageId":"m","parts":[{"kind":"text","text":"x"}]}}`, "message.role"},
		{"v03 agent role", codecV03, `{"message":{"messageId":"m","role":"agent","parts":[{"kind":"text","text":"x"}]}}`, "message.role"},
		{"v03 bad role", codecV03, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"text","text":"x"}]}}`, "message.role"},
		{"v10 agent role", codecV10, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`, "message.role"},
		{"v10 agent role int", codecV10, `{"message":{"messageId":"m","role":2,"parts":[{"text":"x"}]}}`, "message.role"},
		{"v10 unspecified role", codecV10, `{"message":{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"x"}]}}`, "message.role"},
		{"v10 role zero", codecV10, `{"message":{"messageId":"m","role":0,"parts":[{"text":"x"}]}}`, "message.role"},
		{"v10 lowercase role", codecV10, `{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]}}`, "message.role"},
		{"v10 contextId number", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":1}}`, "message.contextId"},
		{"v10 taskId bool", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"task_id":true}}`, "message.taskId"},
		{"v03 metadata array", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}],"metadata":[]}}`, "message.metadata"},
		{"v10 extensions not strings", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"extensions":[1]}}`, "message.extensions[0]"},
		{"v10 referenceTaskIds string", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"referenceTaskIds":"t"}}`, "message.referenceTaskIds"},
		{"v03 wrong message kind", codecV03, `{"message":{"kind":"task","messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]}}`, "message.kind"},
		{"v03 params metadata string", codecV03, `{"message":` + v03Msg + `,"metadata":"x"}`, "metadata"},
		{"v10 tenant number", codecV10, `{"message":` + v10Msg + `,"tenant":1}`, "tenant"},

		// 0.3 parts.
		{"v03 part not object", codecV03, `{"message":{"messageId":"m","role":"user","parts":["hi"]}}`, "message.parts[0]"},
		{"v03 unknown kind", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"image","text":"x"}]}}`, "message.parts[0].kind"},
		{"v03 no kind no member", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"metadata":{}}]}}`, "message.parts[0].kind"},
		{"v03 no kind, a text member", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"type":"unsupported_type","text":"x"}]}}`, "message.parts[0].kind"},
		{"v03 no kind, a data member", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"data":{"a":1}}]}}`, "message.parts[0].kind"},
		{"v03 no kind two members", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"text":"a","data":{}}]}}`, "message.parts[0].kind"},
		{"v03 text missing", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"text"}]}}`, "message.parts[0].text"},
		{"v03 text not string", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":1}]}}`, "message.parts[0].text"},
		{"v03 second part bad", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"a"},{"kind":"data","data":[1]}]}}`, "message.parts[1].data"},
		{"v03 data string", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"data","data":"x"}]}}`, "message.parts[0].data"},
		{"v03 data missing", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"data"}]}}`, "message.parts[0].data"},
		{"v03 file missing", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"file"}]}}`, "message.parts[0].file"},
		{"v03 file not object", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"file","file":"x"}]}}`, "message.parts[0].file"},
		{"v03 file empty", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"file","file":{"name":"a"}}]}}`, "message.parts[0].file"},
		{"v03 file both", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"QQ==","uri":"http://x"}}]}}`, "message.parts[0].file"},
		{"v03 bad base64", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"!!!"}}]}}`, "message.parts[0].file.bytes"},
		{"v03 mixed base64 alphabets", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"a+b-"}}]}}`, "message.parts[0].file.bytes"},
		{"v03 file name number", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"file","file":{"uri":"u","name":3}}]}}`, "message.parts[0].file.name"},
		{"v03 part metadata string", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"x","metadata":"m"}]}}`, "message.parts[0].metadata"},

		// 1.0 parts.
		{"v10 part no member", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"mediaType":"text/plain"}]}}`, "message.parts[0]"},
		{"v10 part two members", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"http://x"}]}}`, "message.parts[0]"},
		{"v10 part 0.3 shape", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"file","file":{"uri":"x"}}]}}`, "message.parts[0]"},
		{"v10 raw bad", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"%%%"}]}}`, "message.parts[0].raw"},
		{"v10 raw number", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":12}]}}`, "message.parts[0].raw"},
		{"v10 url empty", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"url":""}]}}`, "message.parts[0].url"},
		{"v03 uri empty", codecV03, `{"message":{"messageId":"m","role":"user","parts":[{"kind":"file","file":{"uri":""}}]}}`, "message.parts[0].file.uri"},
		{"v10 url number", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"url":12}]}}`, "message.parts[0].url"},
		{"v10 filename number", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"url":"u","filename":1}]}}`, "message.parts[0].filename"},
		{"v10 media_type number", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"url":"u","media_type":1}]}}`, "message.parts[0].mediaType"},
		{"v10 null data is absent", codecV10, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":null}]}}`, "message.parts[0]"},

		// Configuration.
		{"v03 config not object", codecV03, `{"message":` + v03Msg + `,"configuration":true}`, "configuration"},
		{"v03 negative historyLength", codecV03, `{"message":` + v03Msg + `,"configuration":{"historyLength":-1}}`, "configuration.historyLength"},
		{"v10 fractional historyLength", codecV10, `{"message":` + v10Msg + `,"configuration":{"history_length":1.5}}`, "configuration.historyLength"},
		{"v10 historyLength string junk", codecV10, `{"message":` + v10Msg + `,"configuration":{"historyLength":"x"}}`, "configuration.historyLength"},
		{"v10 historyLength too big", codecV10, `{"message":` + v10Msg + `,"configuration":{"historyLength":4294967296}}`, "configuration.historyLength"},
		{"v03 blocking string", codecV03, `{"message":` + v03Msg + `,"configuration":{"blocking":"yes"}}`, "configuration.blocking"},
		{"v10 returnImmediately number", codecV10, `{"message":` + v10Msg + `,"configuration":{"returnImmediately":1}}`, "configuration.returnImmediately"},
		{"v10 acceptedOutputModes string", codecV10, `{"message":` + v10Msg + `,"configuration":{"acceptedOutputModes":"text/plain"}}`, "configuration.acceptedOutputModes"},
		{"v03 push not object", codecV03, `{"message":` + v03Msg + `,"configuration":{"pushNotificationConfig":"x"}}`, "configuration.pushNotificationConfig"},
		{"v10 push not object", codecV10, `{"message":` + v10Msg + `,"configuration":{"taskPushNotificationConfig":[]}}`, "configuration.taskPushNotificationConfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.codec.DecodeSend(json.RawMessage(tt.params))
			if p != nil {
				t.Errorf("params returned with error: %+v", p)
			}
			wantInvalid(t, err, tt.field)
		})
	}
}

func TestDecodeSendReportsAllMessageProblems(t *testing.T) {
	_, err := codecV10.DecodeSend(json.RawMessage(`{"message":{}}`))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatal(err)
	}
	var fields []string
	for _, v := range e.Violations {
		fields = append(fields, v.Field)
	}
	if got := strings.Join(fields, ","); got != "message.messageId,message.role,message.parts" {
		t.Fatalf("violations %s", got)
	}
}

func TestDecodeSendOK(t *testing.T) {
	tests := []struct {
		name   string
		codec  Codec
		params string
		want   SendParams
	}{
		{"v03 minimal defaults to blocking", codecV03, `{"message":` + v03Msg + `}`, SendParams{
			Message:  Message{ID: "m1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}},
			Blocking: true,
		}},
		{"v10 minimal defaults to blocking", codecV10, `{"message":` + v10Msg + `}`, SendParams{
			Message:  Message{ID: "m1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}},
			Blocking: true,
		}},
		{"v03 full", codecV03, `{"message":{"kind":"message","messageId":"m1","contextId":"c1","taskId":"t1","role":"user",
			"parts":[{"kind":"text","text":"hé \"q\"","metadata":{"a":1}},
			         {"kind":"file","file":{"bytes":"aGVsbG8=","name":"h.txt","mimeType":"text/plain"}},
			         {"kind":"file","file":{"uri":"https://x/y.png","mimeType":"image/png"}},
			         {"kind":"data","data":{"k":[1,2]}}],
			"metadata":{"m":true},"extensions":["urn:e"],"referenceTaskIds":["t0"],"unknown":1},
			"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":3,"blocking":false,"pushNotificationConfig":{"url":"https://hook"}},
			"metadata":{"p":1}}`, SendParams{
			Message: Message{ID: "m1", ContextID: "c1", TaskID: "t1", Role: RoleUser,
				Parts: []Part{
					{Kind: PartText, Text: "hé \"q\"", Metadata: json.RawMessage(`{"a":1}`)},
					{Kind: PartFile, Raw: []byte("hello"), Filename: "h.txt", MediaType: "text/plain"},
					{Kind: PartFile, URL: "https://x/y.png", MediaType: "image/png"},
					{Kind: PartData, Data: json.RawMessage(`{"k":[1,2]}`)},
				},
				Metadata: json.RawMessage(`{"m":true}`), Extensions: []string{"urn:e"}, ReferenceTaskIDs: []string{"t0"}},
			AcceptedOutputModes: []string{"text/plain"},
			HistoryLength:       intp(3),
			Blocking:            false,
			Push:                &PushConfig{URL: "https://hook", Version: V03},
			Metadata:            json.RawMessage(`{"p":1}`),
		}},
		{"v10 full with snake_case", codecV10, `{"tenant":"acme","message":{"message_id":"m1","context_id":"c1","task_id":"t1","role":1,
			"parts":[{"text":"hi","media_type":"text/plain","metadata":{"a":1}},
			         {"raw":"aGVsbG8","filename":"h.txt"},
			         {"raw":"-_8"},
			         {"url":"https://x/y.png","mediaType":"image/png"},
			         {"data":[1,"two"]},
			         {"data":"scalar"}],
			"reference_task_ids":["t0"],"kind":"ignored"},
			"configuration":{"accepted_output_modes":["application/json"],"history_length":"0","return_immediately":true,"task_push_notification_config":{"url":"https://hook"}}}`, SendParams{
			Tenant: "acme",
			Message: Message{ID: "m1", ContextID: "c1", TaskID: "t1", Role: RoleUser,
				Parts: []Part{
					{Kind: PartText, Text: "hi", MediaType: "text/plain", Metadata: json.RawMessage(`{"a":1}`)},
					{Kind: PartFile, Raw: []byte("hello"), Filename: "h.txt"},
					{Kind: PartFile, Raw: []byte{0xfb, 0xff}},
					{Kind: PartFile, URL: "https://x/y.png", MediaType: "image/png"},
					{Kind: PartData, Data: json.RawMessage(`[1,"two"]`)},
					{Kind: PartData, Data: json.RawMessage(`"scalar"`)},
				},
				ReferenceTaskIDs: []string{"t0"}},
			AcceptedOutputModes: []string{"application/json"},
			HistoryLength:       intp(0),
			Blocking:            false,
			Push:                &PushConfig{URL: "https://hook", Version: V10},
		}},
		{"v10 returnImmediately false blocks, 0.3 key ignored", codecV10, `{"message":` + v10Msg + `,"configuration":{"returnImmediately":false,"blocking":false}}`, SendParams{
			Message:  Message{ID: "m1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}},
			Blocking: true,
		}},
		{"v03 blocking true, 1.0 key ignored", codecV03, `{"message":` + v03Msg + `,"configuration":{"blocking":true,"returnImmediately":true}}`, SendParams{
			Message:  Message{ID: "m1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}},
			Blocking: true,
		}},
		{"nulls read as absent", codecV10, `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi","metadata":null}],"contextId":null},"configuration":null,"metadata":null}`, SendParams{
			Message:  Message{ID: "m1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}},
			Blocking: true,
		}},
		{"escaped keys and strings", codecV03, `{"message":{"message\u0049d":"m\u00e91","role":"user","parts":[{"kind":"text","text":"a\nb\u2028"}]}}`, SendParams{
			Message:  Message{ID: "mé1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "a\nb\u2028"}}},
			Blocking: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.codec.DecodeSend(json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			compactRaw(got)
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// compactRaw normalises the raw JSON members so tests can compare them
// regardless of the whitespace in the test input.
func compactRaw(p *SendParams) {
	c := func(r json.RawMessage) json.RawMessage {
		if r == nil {
			return nil
		}
		var out bytes.Buffer
		if json.Compact(&out, r) != nil {
			return json.RawMessage("null")
		}
		return out.Bytes()
	}
	p.Metadata = c(p.Metadata)
	p.Message.Metadata = c(p.Message.Metadata)
	for i := range p.Message.Parts {
		p.Message.Parts[i].Data = c(p.Message.Parts[i].Data)
		p.Message.Parts[i].Metadata = c(p.Message.Parts[i].Metadata)
	}
}

func TestDecodeSendCopiesFromBody(t *testing.T) {
	body := []byte(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"k":"v"}}],"metadata":{"a":"b"}}}`)
	p, err := codecV10.DecodeSend(body)
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 'x'
	}
	if string(p.Message.Parts[0].Data) != `{"k":"v"}` || string(p.Message.Metadata) != `{"a":"b"}` || p.Message.ID != "m1" {
		t.Fatalf("decoded values alias the body: %+v", p.Message)
	}
}

func TestDecodeGetTask(t *testing.T) {
	for _, c := range []Codec{codecV03, codecV10} {
		p, err := c.DecodeGetTask(json.RawMessage(`{"id":"t1","historyLength":2,"metadata":{"x":1}}`))
		if err != nil || p.ID != "t1" || p.HistoryLength == nil || *p.HistoryLength != 2 {
			t.Fatalf("%v: %+v %v", c.Version(), p, err)
		}
		p, err = c.DecodeGetTask(json.RawMessage(`{"id":"t1","history_length":0,"tenant":"x"}`))
		if err != nil || p.HistoryLength == nil || *p.HistoryLength != 0 || p.Tenant != "x" {
			t.Fatalf("%v: %+v %v", c.Version(), p, err)
		}
		p, err = c.DecodeGetTask(json.RawMessage(`{"id":"t1"}`))
		if err != nil || p.HistoryLength != nil {
			t.Fatalf("%v: %+v %v", c.Version(), p, err)
		}
		for params, field := range map[string]string{
			``:                                "id",
			`{}`:                              "id",
			`{"id":""}`:                       "id",
			`{"id":7}`:                        "id",
			`{"id":"t","historyLength":-2}`:   "historyLength",
			`{"id":"t","historyLength":"ab"}`: "historyLength",
			`{"id":"t","historyLength":true}`: "historyLength",
			`"t1"`:                            "params",
		} {
			_, err := c.DecodeGetTask(json.RawMessage(params))
			wantInvalid(t, err, field)
		}
	}
}

func TestDecodeTaskID(t *testing.T) {
	for _, c := range []Codec{codecV03, codecV10} {
		p, err := c.DecodeTaskID(json.RawMessage(`{"id":"t1","metadata":{"why":"x"},"tenant":"acme"}`))
		if err != nil || p.ID != "t1" || string(p.Metadata) != `{"why":"x"}` || p.Tenant != "acme" {
			t.Fatalf("%v: %+v %v", c.Version(), p, err)
		}
		for params, field := range map[string]string{
			`null`:                      "id",
			`{"taskId":"t"}`:            "id",
			`{"id":["t"]}`:              "id",
			`{"id":"t","metadata":"x"}`: "metadata",
		} {
			_, err := c.DecodeTaskID(json.RawMessage(params))
			wantInvalid(t, err, field)
		}
	}
}

func TestDecodeListTasks(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		params string
		want   ListTasksParams
		field  string
	}{
		{``, ListTasksParams{PageSize: 50}, ""},
		{`{}`, ListTasksParams{PageSize: 50}, ""},
		{`{"pageSize":null}`, ListTasksParams{PageSize: 50}, ""},
		{`{"pageSize":0}`, ListTasksParams{}, "pageSize"},
		{`{"pageSize":1}`, ListTasksParams{PageSize: 1}, ""},
		{`{"page_size":"100"}`, ListTasksParams{PageSize: 100}, ""},
		{`{"tenant":"a","contextId":"c","status":"TASK_STATE_WORKING","pageToken":"tok","historyLength":0,"statusTimestampAfter":"2026-01-02T03:04:05Z","includeArtifacts":true}`,
			ListTasksParams{Tenant: "a", ContextID: "c", Status: StateWorking, PageSize: 50, PageToken: "tok", HistoryLength: intp(0), StatusTimestampAfter: &ts, IncludeArtifacts: true}, ""},
		{`{"context_id":"c","status":6,"page_token":"p","history_length":4,"status_timestamp_after":"2026-01-02T05:04:05+02:00","include_artifacts":false}`,
			ListTasksParams{ContextID: "c", Status: StateInputRequired, PageSize: 50, PageToken: "p", HistoryLength: intp(4), StatusTimestampAfter: &ts}, ""},
		{`{"status":"TASK_STATE_UNSPECIFIED"}`, ListTasksParams{PageSize: 50}, ""},
		{`{"statusTimestampAfter":"2026-01-02T03:04:05"}`, ListTasksParams{PageSize: 50, StatusTimestampAfter: &ts}, ""},
		{`{"pageSize":101}`, ListTasksParams{}, "pageSize"},
		{`{"pageSize":-1}`, ListTasksParams{}, "pageSize"},
		{`{"pageSize":2.5}`, ListTasksParams{}, "pageSize"},
		{`{"status":"working"}`, ListTasksParams{}, "status"},
		{`{"status":"TASK_STATE_CANCELLED"}`, ListTasksParams{}, "status"},
		{`{"status":9}`, ListTasksParams{}, "status"},
		{`{"status":true}`, ListTasksParams{}, "status"},
		{`{"statusTimestampAfter":"yesterday"}`, ListTasksParams{}, "statusTimestampAfter"},
		{`{"statusTimestampAfter":12}`, ListTasksParams{}, "statusTimestampAfter"},
		{`{"includeArtifacts":"yes"}`, ListTasksParams{}, "includeArtifacts"},
		{`{"historyLength":-1}`, ListTasksParams{}, "historyLength"},
		{`{"contextId":1}`, ListTasksParams{}, "contextId"},
	}
	for _, tt := range tests {
		got, err := codecV10.DecodeListTasks(json.RawMessage(tt.params))
		if tt.field != "" {
			wantInvalid(t, err, tt.field)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.params, err)
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.params, *got, tt.want)
		}
	}
	_, err := codecV03.DecodeListTasks(json.RawMessage(`{}`))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeMethodNotFound {
		t.Fatalf("v03 list: %v", err)
	}
}
