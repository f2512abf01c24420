package a2aagent

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// A card fetch whose answer shows no A2A agent at all (an error status, a
// body that is not an object, an object with none of a card's members)
// asks whether this is one and names `upstream http`, the kind for a
// service written to the agent contract; a card with a bad field is an
// A2A agent's mistake and gets no hint.
func TestCardOfNoAgentHintsAtUpstreamHTTP(t *testing.T) {
	const hint = "; is this an A2A agent? For a service written to the agent contract, use `upstream http`"
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{name: "status", status: http.StatusBadRequest, body: `{"detail":"Method Not Allowed"}`,
			want: "upstream: card answered 400 Bad Request" + hint},
		{name: "not an object", status: http.StatusOK, body: `"hello"`,
			want: "upstream: the agent's card is not valid: a2a error -32006: Invalid agent card: card: must be an object" + hint},
		{name: "not a card", status: http.StatusOK, body: `{"text":"You said: "}`,
			want: "upstream: the agent's card is not valid: a2a error -32006: Invalid agent card: url: is required (or supportedInterfaces)" + hint},
		{name: "a bad card", status: http.StatusOK, body: `{"name":""}`,
			want: "upstream: the agent's card is not valid: a2a error -32006: Invalid agent card: url: is required (or supportedInterfaces)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			core, logs := observer.New(zapcore.WarnLevel)
			c, err := NewCards(CardsConfig{BaseURL: srv.URL, Logger: zap.New(core)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.fetch(); err == nil || err.Error() != tc.want {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			entries := logs.All()
			if len(entries) != 1 || entries[0].Message != "a2a: the agent's card could not be fetched" ||
				entries[0].ContextMap()["error"] != tc.want || entries[0].ContextMap()["card_url"] != srv.URL+DefaultCardPath {
				t.Fatalf("logged %+v", entries)
			}
		})
	}
}
