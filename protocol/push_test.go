package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodePushConfig(t *testing.T) {
	v03p := NewRESTCodecV03(Limits{})
	auth10 := &PushAuth{Schemes: []string{"Bearer"}, Credentials: "s3cret"}
	tests := []struct {
		name   string
		codec  Codec
		params string
		want   PushConfig
	}{
		{"1.0 flat", codecV10, `{"tenant":"t","taskId":"task-1","id":"c1","url":"https://hook.example/a","token":"tok en","authentication":{"scheme":"Bearer","credentials":"s3cret"}}`,
			PushConfig{Tenant: "t", TaskID: "task-1", ID: "c1", URL: "https://hook.example/a", Token: "tok en", Auth: auth10}},
		{"1.0 snake task_id, no id", codecV10, `{"task_id":"task-1","url":"https://h/"}`, PushConfig{TaskID: "task-1", URL: "https://h/"}},
		{"0.3 JSON-RPC", codecV03, `{"taskId":"task-1","pushNotificationConfig":{"id":"c1","url":"https://h/","authentication":{"schemes":["Basic","Bearer"],"credentials":"x"}}}`,
			PushConfig{TaskID: "task-1", ID: "c1", URL: "https://h/", Auth: &PushAuth{Schemes: []string{"Basic", "Bearer"}, Credentials: "x"}}},
		{"0.3 proto name", v03p, `{"name":"tasks/task-1/pushNotificationConfigs/c9","pushNotificationConfig":{"url":"https://h/"}}`,
			PushConfig{TaskID: "task-1", ID: "c9", URL: "https://h/"}},
		{"0.3 TCK parent config_id config", v03p, `{"parent":"tasks/task-1","config_id":"c2","config":{"url":"https://h/"}}`,
			PushConfig{TaskID: "task-1", ID: "c2", URL: "https://h/"}},
		{"0.3 gRPC create request", NewGRPCCodecV03(Limits{}), `{"parent":"tasks/task-1","configId":"c3","config":{"name":"","pushNotificationConfig":{"url":"https://h/"}}}`,
			PushConfig{TaskID: "task-1", ID: "c3", URL: "https://h/"}},
		{"0.3 gRPC create request, named", NewGRPCCodecV03(Limits{}), `{"parent":"tasks/task-1","config":{"name":"tasks/task-1/pushNotificationConfigs/c4","pushNotificationConfig":{"url":"https://h/"}}}`,
			PushConfig{TaskID: "task-1", ID: "c4", URL: "https://h/"}},
		{"0.3 the config's own id wins", codecV03, `{"taskId":"task-1","configId":"outer","pushNotificationConfig":{"id":"inner","url":"https://h/"}}`,
			PushConfig{TaskID: "task-1", ID: "inner", URL: "https://h/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.codec.DecodePushConfig(json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Version = tt.codec.Version()
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestDecodePushConfigErrors(t *testing.T) {
	long := strings.Repeat("a", MaxPushURLBytes)
	tests := []struct {
		name   string
		codec  Codec
		params string
		field  string
	}{
		{"1.0 no url", codecV10, `{"taskId":"t"}`, "url"},
		{"1.0 no task", codecV10, `{"url":"https://h/"}`, "taskId"},
		{"0.3 no config", codecV03, `{"taskId":"t"}`, "pushNotificationConfig"},
		{"0.3 no url", codecV03, `{"taskId":"t","pushNotificationConfig":{}}`, "pushNotificationConfig.url"},
		{"url too long", codecV10, `{"taskId":"t","url":"https://` + long + `"}`, "url"},
		{"url with a space", codecV10, `{"taskId":"t","url":"https://h/a b"}`, "url"},
		{"token with a newline", codecV10, `{"taskId":"t","url":"https://h/","token":"a\nb"}`, "token"},
		{"credentials with CR", codecV10, `{"taskId":"t","url":"https://h/","authentication":{"scheme":"Bearer","credentials":"a\rb"}}`, "authentication.credentials"},
		{"1.0 scheme missing", codecV10, `{"taskId":"t","url":"https://h/","authentication":{"credentials":"x"}}`, "authentication.scheme"},
		{"scheme not a token", codecV10, `{"taskId":"t","url":"https://h/","authentication":{"scheme":"Bear er"}}`, "authentication.scheme"},
		{"0.3 too many schemes", codecV03, `{"taskId":"t","pushNotificationConfig":{"url":"https://h/","authentication":{"schemes":["a","b","c","d","e","f","g","h","i"]}}}`, "pushNotificationConfig.authentication.schemes"},
		{"0.3 bad name", NewRESTCodecV03(Limits{}), `{"name":"tasks/t","pushNotificationConfig":{"url":"https://h/"}}`, "name"},
		{"id too long", codecV10, `{"taskId":"t","id":"` + strings.Repeat("i", 257) + `","url":"https://h/"}`, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.codec.DecodePushConfig(json.RawMessage(tt.params))
			perr, ok := err.(*Error)
			if !ok || perr.Code != CodeInvalidParams {
				t.Fatalf("err = %v, want -32602", err)
			}
			if len(perr.Violations) == 0 || perr.Violations[0].Field != tt.field {
				t.Fatalf("violations = %+v, want field %q", perr.Violations, tt.field)
			}
		})
	}
}

func TestDecodePushConfigID(t *testing.T) {
	tests := []struct {
		name   string
		codec  Codec
		params string
		needID bool
		want   PushConfigID
		field  string // the error's field, when one is wanted
	}{
		{"1.0", codecV10, `{"taskId":"t","id":"c"}`, true, PushConfigID{TaskID: "t", ID: "c"}, ""},
		{"1.0 get needs id", codecV10, `{"taskId":"t"}`, false, PushConfigID{}, "id"},
		{"0.3 get by task alone", codecV03, `{"id":"t"}`, false, PushConfigID{TaskID: "t"}, ""},
		{"0.3 delete needs config id", codecV03, `{"id":"t"}`, true, PushConfigID{}, "pushNotificationConfigId"},
		{"0.3", codecV03, `{"id":"t","pushNotificationConfigId":"c"}`, true, PushConfigID{TaskID: "t", ID: "c"}, ""},
		{"0.3 proto name", NewGRPCCodecV03(Limits{}), `{"name":"tasks/t/pushNotificationConfigs/c"}`, true, PushConfigID{TaskID: "t", ID: "c"}, ""},
		{"no task", codecV10, `{"id":"c"}`, true, PushConfigID{}, "taskId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.codec.DecodePushConfigID(json.RawMessage(tt.params), tt.needID)
			if tt.field != "" {
				perr, ok := err.(*Error)
				if !ok || perr.Code != CodeInvalidParams || perr.Violations[0].Field != tt.field {
					t.Fatalf("err = %v, want -32602 on %q", err, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.want {
				t.Fatalf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestDecodePushList(t *testing.T) {
	got, err := codecV10.DecodePushList(json.RawMessage(`{"taskId":"t","pageSize":5,"pageToken":"2"}`))
	if err != nil || *got != (PushListParams{TaskID: "t", PageSize: 5, PageToken: "2"}) {
		t.Fatalf("1.0: %+v %v", got, err)
	}
	got, err = codecV03.DecodePushList(json.RawMessage(`{"id":"t"}`))
	if err != nil || *got != (PushListParams{TaskID: "t"}) {
		t.Fatalf("0.3: %+v %v", got, err)
	}
	got, err = NewGRPCCodecV03(Limits{}).DecodePushList(json.RawMessage(`{"parent":"tasks/t"}`))
	if err != nil || *got != (PushListParams{TaskID: "t"}) {
		t.Fatalf("0.3 proto: %+v %v", got, err)
	}
	if _, err := codecV10.DecodePushList(json.RawMessage(`{}`)); err == nil {
		t.Fatal("1.0 without taskId decoded")
	}
}

func TestAppendPushConfig(t *testing.T) {
	c := PushConfig{TaskID: "t1", ID: "c1", URL: "https://h/x?a=1&b=2", Token: "tok",
		Auth: &PushAuth{Schemes: []string{"Bearer", "Basic"}, Credentials: "cr"}}
	bare := PushConfig{TaskID: "t1", ID: "c2", URL: "https://h/"}
	tests := []struct {
		name  string
		codec Codec
		want  string
		list  string
	}{
		{"1.0", codecV10,
			`{"id":"c1","taskId":"t1","url":"https://h/x?a=1&b=2","token":"tok","authentication":{"scheme":"Bearer","credentials":"cr"}}`,
			`{"configs":[{"id":"c1","taskId":"t1","url":"https://h/x?a=1&b=2","token":"tok","authentication":{"scheme":"Bearer","credentials":"cr"}},{"id":"c2","taskId":"t1","url":"https://h/"}],"nextPageToken":"2"}`},
		{"0.3 JSON-RPC", codecV03,
			`{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h/x?a=1&b=2","token":"tok","authentication":{"schemes":["Bearer","Basic"],"credentials":"cr"}}}`,
			`[{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h/x?a=1&b=2","token":"tok","authentication":{"schemes":["Bearer","Basic"],"credentials":"cr"}}},{"taskId":"t1","pushNotificationConfig":{"id":"c2","url":"https://h/"}}]`},
		{"0.3 proto", NewRESTCodecV03(Limits{}),
			`{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://h/x?a=1&b=2","token":"tok","authentication":{"schemes":["Bearer","Basic"],"credentials":"cr"}}}`,
			`{"configs":[{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://h/x?a=1&b=2","token":"tok","authentication":{"schemes":["Bearer","Basic"],"credentials":"cr"}}},{"name":"tasks/t1/pushNotificationConfigs/c2","pushNotificationConfig":{"id":"c2","url":"https://h/"}}],"nextPageToken":"2"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.codec.AppendPushConfig(nil, &c)); got != tt.want {
				t.Fatalf("config\n got %s\nwant %s", got, tt.want)
			}
			if got := string(tt.codec.AppendPushList(nil, &PushListResult{Configs: []PushConfig{c, bare}, NextPageToken: "2"})); got != tt.list {
				t.Fatalf("list\n got %s\nwant %s", got, tt.list)
			}
			// What the codec writes it reads back.
			back, err := tt.codec.DecodePushConfig(tt.codec.AppendPushConfig(nil, &c))
			if err != nil {
				t.Fatal(err)
			}
			want := c
			want.Version = tt.codec.Version()
			if tt.codec.Version() == V10 {
				want.Auth = &PushAuth{Schemes: []string{"Bearer"}, Credentials: "cr"}
			}
			if !reflect.DeepEqual(*back, want) {
				t.Fatalf("round trip\n got %+v\nwant %+v", *back, want)
			}
		})
	}
}

func TestDecodeInlinePush(t *testing.T) {
	p, err := codecV10.DecodeSend(json.RawMessage(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://h/","token":"t"}}}`))
	if err != nil || p.Push == nil || *p.Push != (PushConfig{URL: "https://h/", Token: "t", Version: V10}) {
		t.Fatalf("1.0: %+v %v", p, err)
	}
	_, err = codecV03.DecodeSend(json.RawMessage(`{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]},"configuration":{"pushNotificationConfig":{"token":"t"}}}`))
	perr, ok := err.(*Error)
	if !ok || perr.Violations[0].Field != "configuration.pushNotificationConfig.url" {
		t.Fatalf("0.3 without url: %v", err)
	}
}
