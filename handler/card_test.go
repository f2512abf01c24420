package handler

import (
	"errors"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The extended card: refused by version when the card declares none,
// refused outside JSON-RPC for an anonymous caller, the rendered document
// for an authenticated one, in the caller's version; params other than
// none, null, {} or an empty tenant are -32602; a render that fails is
// -32603 with an error id.
func TestExtendedCard(t *testing.T) {
	none := newTestService(t, stepsAgent{})
	if _, perr := none.ExtendedCard(Caller{Owner: "alice"}, protocol.V10, nil); perr == nil || perr.Code != protocol.CodeUnsupportedOperation {
		t.Fatalf("1.0 without extended card: %v", perr)
	}
	if _, perr := none.ExtendedCard(Caller{Owner: "alice"}, protocol.V03, nil); perr == nil || perr.Code != protocol.CodeExtendedCardNotConfigured {
		t.Fatalf("0.3 without extended card: %v", perr)
	}
	if none.Challenge() != "" {
		t.Fatal("challenge without an extended card")
	}

	fail := false
	svc := newTestService(t, stepsAgent{}, func(o *Options) {
		o.ExtendedCard = &ExtendedCardOptions{Challenge: `Basic realm="a2a"`,
			Render: func(rpcURL string, v protocol.Version) ([]byte, error) {
				if fail {
					return nil, errors.New("boom")
				}
				return []byte(`{"for":"` + v.String() + ` ` + rpcURL + `"}`), nil
			}}
	})
	if svc.Challenge() != `Basic realm="a2a"` {
		t.Fatalf("challenge %q", svc.Challenge())
	}
	req := fixedEndpoint("http://agent.example/a2a")
	for _, v := range []protocol.Version{protocol.V03, protocol.V10} {
		if _, perr := svc.ExtendedCard(Caller{Endpoint: req}, v, nil); perr == nil || perr.Code != protocol.CodeUnauthenticated ||
			protocol.MapError(perr).HTTP != 401 || protocol.MapError(perr).Code != protocol.StatusUnauthenticated {
			t.Fatalf("%s anonymous: %v", v, perr)
		}
		doc, perr := svc.ExtendedCard(Caller{Owner: "alice", Endpoint: req}, v, nil)
		if perr != nil || string(doc) != `{"for":"`+v.String()+` http://agent.example/a2a"}` {
			t.Fatalf("%s: %s %v", v, doc, perr)
		}
	}
	for params, ok := range map[string]bool{
		``: true, `null`: true, `{}`: true, ` { } `: true, `{"tenant":""}`: true,
		`{"tenant":"t1"}`: false, `{"x":1}`: false, `[]`: false, `"a"`: false, `{"tenant":"","y":2}`: false,
	} {
		_, perr := svc.ExtendedCard(Caller{Owner: "alice", Endpoint: req}, protocol.V10, []byte(params))
		if ok != (perr == nil) || (!ok && perr.Code != protocol.CodeInvalidParams) {
			t.Errorf("params %q: %v", params, perr)
		}
	}
	// A call that names no endpoint has no URLs for the card.
	if _, perr := svc.ExtendedCard(Caller{Owner: "alice"}, protocol.V10, nil); perr == nil || perr.Code != protocol.CodeInternal {
		t.Fatalf("no endpoint: %v", perr)
	}
	fail = true
	if _, perr := svc.ExtendedCard(Caller{Owner: "alice", Endpoint: req}, protocol.V10, nil); perr == nil || perr.Code != protocol.CodeInternal || perr.Metadata["errorId"] == "" {
		t.Fatalf("failed render: %v", perr)
	}
}

// fixedEndpoint is an Endpoint at one URL.
type fixedEndpoint string

func (e fixedEndpoint) RPCURL() (string, error) { return string(e), nil }
