package integration

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// pushZoneCfg serves push on every binding; 127.0.0.1 is allowed (the
// control receiver), ::1 is not.
const pushZoneCfg = `
http://:9080 {
	a2a {
		upstream {{.Agent}}
		owner {http.request.header.X-Owner}
		rest_path /a2a/rest
		grpc on` + skillBlock + `
		push {
			allow 127.0.0.1
			timeout 2s
			max_attempts 1
			max_configs 10
		}
	}
}
`

// zoneRefusal is what every binding says of a webhook URL with a zone.
const zoneRefusal = "The push notification URL is refused: the URL's host carries an IPv6 zone (%25…): a webhook may not name an interface"

// TestPushZonedURLRefused: a webhook URL whose IPv6 address carries a
// zone ([::1%25lo], [::1%251], [fd00::…%25eth0], [fe80::…%25eth0]) is
// refused when it is set, on JSON-RPC 1.0 and 0.3, HTTP+JSON 1.0 and
// 0.3, gRPC 1.0 and 0.3 and inline in a send, each with the binding's
// invalid-params answer naming the url field; a loopback listener the
// zoned URLs point at is never reached, though the task's changes are
// delivered to an allowed receiver after them.
func TestPushZonedURLRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	var hits atomic.Int32
	hidden := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) })}
	go func() { _ = hidden.Serve(ln) }()
	t.Cleanup(func() { _ = hidden.Close() })
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	zoned := []string{
		"http://[::1%25lo]:" + port + "/hook",
		"http://[::1%251]:" + port + "/hook",
		"http://[fd00::1%25eth0]:" + port + "/hook",
		"http://[fe80::1%25eth0]:" + port + "/hook",
	}

	wh := newWebhook(t)
	loadGlobal(t, h2cGlobal, pushZoneCfg, map[string]any{"Agent": askAgent(t).URL()})
	url := base + "/a2a"
	erin := withHeader("X-Owner", "erin")
	task := send10(t, url, msg10("weather", "", ""), erin)
	if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("task is %s", task.Status.State)
	}
	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	g10, g03 := a2apb.NewA2AServiceClient(conn), a2apb03.NewA2AServiceClient(conn)
	ctx10 := grpcCtx(t, "x-owner", "erin")
	ctx03 := metadata.NewOutgoingContext(grpcCtx(t), metadata.Pairs("a2a-version", "0.3", "x-owner", "erin"))
	rest := base + "/a2a/rest"

	for i, u := range zoned {
		id := "z" + strconv.Itoa(i)
		e := call(t, url, "1.0", "CreateTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": id, "url": u}, erin).fails(t, -32602)
		if e.Message != zoneRefusal || !strings.Contains(string(e.Data), `"field":"url"`) {
			t.Errorf("JSON-RPC 1.0 %s: %s %s", u, e.Message, e.Data)
		}
		e = call(t, url, "0.3", "tasks/pushNotificationConfig/set", map[string]any{"taskId": task.ID,
			"pushNotificationConfig": map[string]any{"id": id, "url": u}}, erin).fails(t, -32602)
		if e.Message != zoneRefusal {
			t.Errorf("JSON-RPC 0.3 %s: %s", u, e.Message)
		}
		body, _ := json.Marshal(map[string]any{"id": id, "url": u})
		ra := restDo(t, "POST", rest+"/tasks/"+task.ID+"/pushNotificationConfigs", string(body), erin)
		if ra.Status != 400 || !strings.Contains(string(ra.Body), `"status":"INVALID_ARGUMENT"`) ||
			!strings.Contains(string(ra.Body), `"field":"url"`) || !strings.Contains(string(ra.Body), "carries an IPv6 zone") {
			t.Errorf("HTTP+JSON 1.0 %s: %d %s", u, ra.Status, ra.Body)
		}
		body, _ = json.Marshal(map[string]any{"pushNotificationConfig": map[string]any{"id": id, "url": u}})
		ra = restDo(t, "POST", rest+"/v1/tasks/"+task.ID+"/pushNotificationConfigs", string(body), erin)
		if ra.Status != 400 || !strings.Contains(string(ra.Body), "carries an IPv6 zone") {
			t.Errorf("HTTP+JSON 0.3 %s: %d %s", u, ra.Status, ra.Body)
		}
		_, err := g10.CreateTaskPushNotificationConfig(ctx10, &a2apb.TaskPushNotificationConfig{TaskId: task.ID, Id: id, Url: u})
		grpcZoneRefused(t, "gRPC 1.0 "+u, err)
		_, err = g03.CreateTaskPushNotificationConfig(ctx03, &a2apb03.CreateTaskPushNotificationConfigRequest{Parent: "tasks/" + task.ID, ConfigId: id,
			Config: &a2apb03.TaskPushNotificationConfig{PushNotificationConfig: &a2apb03.PushNotificationConfig{Id: id, Url: u}}})
		grpcZoneRefused(t, "gRPC 0.3 "+u, err)
		// Inline in a send: refused before any task is made or continued.
		m := msg10("Paris", task.ID, "")
		e = call(t, url, "1.0", "SendMessage", map[string]any{"message": m,
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": u}}}, erin).fails(t, -32602)
		if e.Message != zoneRefusal {
			t.Errorf("inline 1.0 %s: %s", u, e.Message)
		}
	}
	var list struct {
		Configs []struct{ ID string } `json:"configs"`
	}
	call(t, url, "1.0", "ListTaskPushNotificationConfigs", map[string]any{"taskId": task.ID}, erin).ok(t, &list)
	if len(list.Configs) != 0 {
		t.Fatalf("configs stored: %+v", list.Configs)
	}

	// The allowed receiver, set last, gets each change after any
	// delivery to an earlier config: when it has the completed status,
	// nothing else is on its way to the loopback listener.
	call(t, url, "1.0", "CreateTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": "ok", "url": wh.URL()}, erin).ok(t, nil)
	send10(t, url, msg10("Paris", task.ID, ""), erin)
	for {
		var got streamResponse10
		if err := json.Unmarshal(wh.next(t).body, &got); err != nil {
			t.Fatal(err)
		}
		if s, _ := got.describe(); s == "status:TASK_STATE_COMPLETED" {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback listener behind the zoned URLs was reached %d times", n)
	}
}

// grpcZoneRefused asserts err is INVALID_ARGUMENT with the zone refusal,
// its BadRequest naming url.
func grpcZoneRefused(t *testing.T, what string, err error) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument || st.Message() != zoneRefusal {
		t.Errorf("%s: %v, want INVALID_ARGUMENT: %s", what, err, zoneRefusal)
		return
	}
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) == 1 && br.GetFieldViolations()[0].GetField() == "url" {
			return
		}
	}
	t.Errorf("%s: no BadRequest naming url in %v", what, st.Details())
}
