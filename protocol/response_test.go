package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeResponseResult(t *testing.T) {
	tests := []struct {
		body   string
		id     int64
		result string
	}{
		{`{"jsonrpc":"2.0","id":3,"result":{"kind":"task"}}`, 3, `{"kind":"task"}`},
		{` {"result" : [1] , "id":-9, "jsonrpc":"2.0", "extra":{"x":1}} `, -9, `[1]`},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, 1, `null`},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, 0, `{}`},
		{`{"jsonrpc":"2.0","id":9223372036854775807,"result":"x"}`, 1<<63 - 1, `"x"`},
	}
	for _, tt := range tests {
		id, res, rpcErr, err := DecodeResponse([]byte(tt.body))
		if err != nil || rpcErr != nil || id != tt.id || string(res) != tt.result {
			t.Errorf("%s: id %d result %s rpcErr %v err %v", tt.body, id, res, rpcErr, err)
		}
	}
}

// TestDecodeResponseError: an agent's error keeps its code, message and
// data; 1.0's details are read into the neutral error, so an error this
// server renders reads back as itself.
func TestDecodeResponseError(t *testing.T) {
	id, res, rpcErr, err := DecodeResponse([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-32001,"message":"Task not found","data":{"taskId":"t-1","n":[1,2]}}}`))
	if err != nil || res != nil || id != 4 {
		t.Fatalf("%d %s %v", id, res, err)
	}
	want := &Error{Code: -32001, Message: "Task not found", Data: json.RawMessage(`{"taskId":"t-1","n":[1,2]}`)}
	if !reflect.DeepEqual(rpcErr, want) {
		t.Fatalf("got %+v", rpcErr)
	}
	// No data, a code outside the table, a message with escapes.
	_, _, rpcErr, err = DecodeResponse([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-31401,"message":"no \"auth\""}}`))
	if err != nil || !reflect.DeepEqual(rpcErr, &Error{Code: -31401, Message: `no "auth"`}) {
		t.Fatalf("%+v %v", rpcErr, err)
	}
	// Details of an unknown shape stay in Data alone.
	_, _, rpcErr, err = DecodeResponse([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"x","data":["plain",{"@type":"other"}]}}`))
	if err != nil || rpcErr.Reason != "" || rpcErr.Violations != nil || string(rpcErr.Data) != `["plain",{"@type":"other"}]` {
		t.Fatalf("%+v %v", rpcErr, err)
	}

	for _, fe := range fixtureErrors() {
		for _, c := range []Codec{codecV03, codecV10} {
			body := appendErrorResponse(nil, []byte("12"), c.AppendError(nil, fe.err))
			id, _, got, err := DecodeResponse(body)
			if err != nil || id != 12 || got == nil {
				t.Fatalf("%v %s: %v %v", c.Version(), fe.name, got, err)
			}
			if got.Code != fe.err.Code {
				t.Errorf("%v %s: code %d", c.Version(), fe.name, got.Code)
			}
			if c.Version() == V03 {
				if got.Data != nil {
					t.Errorf("0.3 %s: data %s", fe.name, got.Data)
				}
				continue
			}
			want := *fe.err
			want.Data = got.Data
			if want.Reason == "" && len(want.Metadata) > 0 {
				want.Reason = jsonrpcReasons[want.Code]
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("1.0 %s:\n got %+v\nwant %+v", fe.name, *got, want)
			}
		}
	}
}

func TestDecodeResponseGarbage(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat(`[`, DefaultMaxDepth) + strings.Repeat(`]`, DefaultMaxDepth) + `}`
	tests := []struct {
		name, body, field string
	}{
		{"empty", ``, "response"},
		{"not json", `{"jsonrpc":"2.0",`, "response"},
		{"two values", `{} {}`, "response"},
		{"bad utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xfe\"}", "response"},
		{"array", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, "response"},
		{"string", `"ok"`, "response"},
		{"too deep", deep, "response"},
		{"no jsonrpc", `{"id":1,"result":{}}`, "jsonrpc"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"result":{}}`, "jsonrpc"},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"result":{}}`, "jsonrpc"},
		{"jsonrpc twice", `{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}`, "jsonrpc"},
		{"no id", `{"jsonrpc":"2.0","result":{}}`, "id"},
		{"string id", `{"jsonrpc":"2.0","id":"1","result":{}}`, "id"},
		{"fraction id", `{"jsonrpc":"2.0","id":1.5,"result":{}}`, "id"},
		{"huge id", `{"jsonrpc":"2.0","id":99999999999999999999,"result":{}}`, "id"},
		{"object id", `{"jsonrpc":"2.0","id":{},"result":{}}`, "id"},
		{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`, "id"},
		{"neither", `{"jsonrpc":"2.0","id":1}`, "result"},
		{"both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, "result"},
		{"both null result", `{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":1,"message":"x"}}`, "result"},
		{"result twice", `{"jsonrpc":"2.0","id":1,"result":{},"result":{}}`, "result"},
		{"error null", `{"jsonrpc":"2.0","id":1,"error":null}`, "error"},
		{"error string", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, "error"},
		{"error no code", `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, "error.code"},
		{"error code string", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"x"}}`, "error.code"},
		{"error code fraction", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, "error.code"},
		{"error message number", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":5}}`, "error.message"},
		{"error code twice", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2}}`, "error.code"},
	}
	for _, tt := range tests {
		id, res, rpcErr, err := DecodeResponse([]byte(tt.body))
		if id != 0 || res != nil || rpcErr != nil {
			t.Errorf("%s: id %d result %s rpcErr %v with error", tt.name, id, res, rpcErr)
		}
		e := wantAgentError(t, tt.name, err, tt.field)
		if tt.name == "too deep" && (e.Metadata["limit"] != LimitMaxJSONDepth || e.Metadata["max"] != "32") {
			t.Errorf("too deep: metadata %v", e.Metadata)
		}
	}
	// The depth limit is the caller's to set.
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{"a":{"b":{}}}}`)
	if _, _, _, err := DecodeResponseLimit(body, 4); err != nil {
		t.Fatal(err)
	}
	e := wantAgentError(t, "limit 3", func() error { _, _, _, err := DecodeResponseLimit(body, 3); return err }(), "response")
	if e.Metadata["max"] != "3" {
		t.Fatalf("metadata %v", e.Metadata)
	}
}

// TestResponseFrameToEvent reads an SSE frame the way a client does:
// envelope, then the codec's result.
func TestResponseFrameToEvent(t *testing.T) {
	for _, c := range []Codec{codecV03, codecV10} {
		ev := fixtureEvents()[2]
		frame := appendResult(nil, []byte("5"), c.AppendStreamResult(nil, &ev))
		id, res, rpcErr, err := DecodeResponse(frame)
		if err != nil || rpcErr != nil || id != 5 {
			t.Fatalf("%v: %v %v", c.Version(), rpcErr, err)
		}
		got, err := c.DecodeStreamResult(res)
		if err != nil || !reflect.DeepEqual(*got, onWire{c.Version()}.event(ev)) {
			t.Fatalf("%v: %v %s", c.Version(), err, dump(got))
		}
	}
}
