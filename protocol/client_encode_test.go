package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

func fixtureSendParams() SendParams {
	m := fixtureUserMessage()
	m.Parts = fixtureParts()
	return SendParams{
		Tenant:              "tenant-a",
		Message:             m,
		AcceptedOutputModes: []string{"text/plain", "application/json"},
		HistoryLength:       ptr(3),
		Blocking:            true,
		Metadata:            json.RawMessage(`{"trace":"abc"}`),
	}
}

func minimalMessage() Message {
	return Message{ID: "msg-1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}}
}

func TestMethodName(t *testing.T) {
	tests := []struct {
		m        Method
		v03, v10 string
	}{
		{MethodSend, "message/send", "SendMessage"},
		{MethodStream, "message/stream", "SendStreamingMessage"},
		{MethodGetTask, "tasks/get", "GetTask"},
		{MethodListTasks, "", "ListTasks"},
		{MethodCancelTask, "tasks/cancel", "CancelTask"},
		{MethodSubscribe, "tasks/resubscribe", "SubscribeToTask"},
		{MethodPushSet, "tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"},
		{MethodExtendedCard, "agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"},
		{MethodUnknown, "", ""},
		{Method(99), "", ""},
	}
	for _, tt := range tests {
		if got := codecV03.MethodName(tt.m); got != tt.v03 {
			t.Errorf("0.3 %d: %q, want %q", tt.m, got, tt.v03)
		}
		if got := codecV10.MethodName(tt.m); got != tt.v10 {
			t.Errorf("1.0 %d: %q, want %q", tt.m, got, tt.v10)
		}
		// The name maps back to the operation on the server side.
		for _, c := range []Codec{codecV03, codecV10} {
			if name := c.MethodName(tt.m); name != "" {
				if m, ok := c.Method(name); !ok || m != tt.m {
					t.Errorf("%v %q maps back to %d", c.Version(), name, m)
				}
			}
		}
	}
}

// TestGoldenClientEncodings pins the exact bytes of every params encoder
// in both versions.
func TestGoldenClientEncodings(t *testing.T) {
	full := fixtureSendParams()
	nonBlocking := SendParams{Message: minimalMessage(), Blocking: false}
	blocking := SendParams{Tenant: "tenant-a", Message: minimalMessage(), Blocking: true}
	zero := 0
	for _, c := range []Codec{codecV03, codecV10} {
		dir := codecDir(c) + "/"
		params := c.AppendSendParams(nil, &full)
		cases := []struct {
			name string
			got  []byte
		}{
			{"client_send_full.json", params},
			{"client_send_nonblocking.json", c.AppendSendParams(nil, &nonBlocking)},
			{"client_send_blocking.json", c.AppendSendParams(nil, &blocking)},
			{"client_get_task.json", c.AppendGetTaskParams(nil, &GetTaskParams{Tenant: "tenant-a", ID: "task-1", HistoryLength: &zero})},
			{"client_get_task_minimal.json", c.AppendGetTaskParams(nil, &GetTaskParams{ID: "task-1"})},
			{"client_task_id.json", c.AppendTaskIDParams(nil, &TaskIDParams{Tenant: "tenant-a", ID: "task-1", Metadata: json.RawMessage(`{"why":"done"}`)})},
			{"client_task_id_minimal.json", c.AppendTaskIDParams(nil, &TaskIDParams{ID: "task-1"})},
			{"client_request_send.json", AppendRequest(nil, 7, c.MethodName(MethodSend), params)},
		}
		for _, tc := range cases {
			checkGolden(t, dir+tc.name, tc.got)
		}
	}
	checkGolden(t, "client_request_no_params.json", AppendRequest(nil, -1, "GetExtendedAgentCard", nil))
}

// TestClientParamsRoundTrip checks server-decode(client-encode(p)) == p
// for every params type, minus what a version cannot carry (0.3: the
// tenant, media types on text and data parts, non-object data).
func TestClientParamsRoundTrip(t *testing.T) {
	sends := []SendParams{
		fixtureSendParams(),
		{Message: minimalMessage(), Blocking: false},
		{Message: minimalMessage(), Blocking: true},
		{Tenant: "t", Message: minimalMessage(), HistoryLength: ptr(0), AcceptedOutputModes: []string{"text/plain"}},
	}
	for _, c := range []Codec{codecV03, codecV10} {
		for i, p := range sends {
			want := p
			if c.Version() == V03 {
				want.Tenant = ""
				want.Message = forV03(p.Message)
			}
			enc := c.AppendSendParams(nil, &p)
			got, err := c.DecodeSend(enc)
			if err != nil {
				t.Fatalf("%v send #%d: %v\n%s", c.Version(), i, err, enc)
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("%v send #%d:\n got %+v\nwant %+v\n%s", c.Version(), i, *got, want, enc)
			}
		}
		for i, p := range []GetTaskParams{{Tenant: "t", ID: "task-1", HistoryLength: ptr(5)}, {ID: "x"}} {
			want := p
			if c.Version() == V03 {
				want.Tenant = ""
			}
			got, err := c.DecodeGetTask(c.AppendGetTaskParams(nil, &p))
			if err != nil || !reflect.DeepEqual(*got, want) {
				t.Errorf("%v get #%d: %v %+v", c.Version(), i, err, got)
			}
		}
		for i, p := range []TaskIDParams{{Tenant: "t", ID: "task-1", Metadata: json.RawMessage(`{"a":[1]}`)}, {ID: "x"}} {
			want := p
			if c.Version() == V03 {
				want.Tenant = ""
			}
			got, err := c.DecodeTaskID(c.AppendTaskIDParams(nil, &p))
			if err != nil || !reflect.DeepEqual(*got, want) {
				t.Errorf("%v task id #%d: %v %+v", c.Version(), i, err, got)
			}
		}
	}
}

// TestClientRequestEnvelope checks a request the client writes is one the
// server's envelope decoder reads back whole.
func TestClientRequestEnvelope(t *testing.T) {
	for _, c := range []Codec{codecV03, codecV10} {
		p := fixtureSendParams()
		body := AppendRequest(nil, 42, c.MethodName(MethodStream), c.AppendSendParams(nil, &p))
		req, e := decodeRequest(body)
		if e != nil {
			t.Fatalf("%v: %v\n%s", c.Version(), e, body)
		}
		if string(req.ID) != "42" || req.Method != c.MethodName(MethodStream) {
			t.Fatalf("%v: id %s method %q", c.Version(), req.ID, req.Method)
		}
		if _, err := c.DecodeSend(req.Params); err != nil {
			t.Fatalf("%v: %v", c.Version(), err)
		}
	}
}
