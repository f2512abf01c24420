package integration

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/go-jose/go-jose/v4"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/signing"
)

// The card's security: what Caddy's auth directives enforce, declared in
// both card versions; the extended card for callers who passed them; and
// every card signed, verifiable with the JWKS the mount serves.

// securedCard is the part of a card the security tests read.
type securedCard struct {
	Description     string                     `json:"description"`
	SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
	// 1.0
	SecurityRequirements []json.RawMessage `json:"securityRequirements"`
	// 0.3
	Security                          []map[string][]string `json:"security"`
	SupportsAuthenticatedExtendedCard bool                  `json:"supportsAuthenticatedExtendedCard"`
	Capabilities                      struct {
		ExtendedAgentCard bool `json:"extendedAgentCard"`
	} `json:"capabilities"`
	Skills []struct {
		ID string `json:"id"`
	} `json:"skills"`
	Signatures []struct {
		Protected string `json:"protected"`
		Signature string `json:"signature"`
	} `json:"signatures"`
}

func (c securedCard) skillIDs() string {
	var ids []string
	for _, s := range c.Skills {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ",")
}

// cardKey writes a fresh P-256 key as PKCS#8 PEM and returns its file.
func cardKey(t *testing.T) string {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(ec)
	file := filepath.Join(t.TempDir(), "card.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

const securedExtendedCard = `
		extended_card {
			description "The agent, for staff."
			skill admin {
				name "Admin"
				description "Operations for staff."
				tags ops
			}
		}`

// TestCardSecurityBasic: basic_auth gates the RPC routes and the card,
// public, says so (1.0 httpAuthSecurityScheme + securityRequirements, 0.3
// the OpenAPI shape + security); alice gets the extended card over
// JSON-RPC in both versions and over HTTP+JSON; each card is signed and
// verifies against the served JWKS, and a changed byte does not.
func TestCardSecurityBasic(t *testing.T) {
	a := textAgent(t)
	load(t, `
http://:9080 {
	@rpc path /a2a /a2a/*
	basic_auth @rpc {
		alice {{.Alice}}
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		rest_path /a2a/rest
		security_scheme users basic {
			description "Caddy basic_auth"
		}
		security users`+securedExtendedCard+`
		url http://127.0.0.1:9080/a2a
		sign_card {{.Key}} {
			kid card-1
		}
	}
}
`, map[string]any{"Agent": a.URL(), "Alice": aliceHash, "Key": cardKey(t)})
	alice := withAuth("alice", "alice-pw")

	resp, body := get(t, "GET", base+"/.well-known/jwks.json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("JWKS: %d %s", resp.StatusCode, body)
	}
	var jwks jose.JSONWebKeySet
	if err := json.Unmarshal(body, &jwks); err != nil || len(jwks.Keys) != 1 || jwks.Keys[0].KeyID != "card-1" {
		t.Fatalf("JWKS %s: %v", body, err)
	}
	verify := func(what string, doc []byte) securedCard {
		t.Helper()
		if err := signing.VerifyCard(doc, jwks.Keys...); err != nil {
			t.Fatalf("%s does not verify: %v\n%s", what, err, doc)
		}
		tampered := bytes.Replace(doc, []byte(`"Test agent"`), []byte(`"Test agenT"`), 1)
		if bytes.Equal(tampered, doc) {
			t.Fatalf("%s has no name to tamper with: %s", what, doc)
		}
		if signing.VerifyCard(tampered, jwks.Keys...) == nil {
			t.Fatalf("%s: a tampered card verifies", what)
		}
		var c securedCard
		if err := json.Unmarshal(doc, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Signatures) != 1 {
			t.Fatalf("%s: %d signatures", what, len(c.Signatures))
		}
		hdr, err := base64.RawURLEncoding.DecodeString(c.Signatures[0].Protected)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"alg":"ES256","jku":"http://127.0.0.1:9080/.well-known/jwks.json","kid":"card-1","typ":"JOSE"}`
		if string(hdr) != want {
			t.Errorf("%s: protected header %s, want %s", what, hdr, want)
		}
		return c
	}

	// The public card, in each version: schemes, requirements, the
	// extended card announced; the staff skill is not in it.
	for _, v := range []string{"1.0", "0.3", ""} {
		resp, body := get(t, "GET", base+"/.well-known/agent-card.json", withHeader("A2A-Version", v))
		if resp.StatusCode != 200 {
			t.Fatalf("card %q: %d", v, resp.StatusCode)
		}
		c := verify("public card "+v, body)
		if c.skillIDs() != "echo" {
			t.Errorf("public card %q skills %s", v, c.skillIDs())
		}
		scheme := string(c.SecuritySchemes["users"])
		if v != "0.3" {
			if !strings.Contains(scheme, `"httpAuthSecurityScheme":{"description":"Caddy basic_auth","scheme":"Basic"}`) &&
				!strings.Contains(scheme, `"httpAuthSecurityScheme":{"scheme":"Basic","description":"Caddy basic_auth"}`) {
				t.Errorf("card %q users scheme %s", v, scheme)
			}
			if len(c.SecurityRequirements) != 1 || string(c.SecurityRequirements[0]) != `{"schemes":{"users":{}}}` {
				t.Errorf("card %q securityRequirements %s", v, c.SecurityRequirements)
			}
			if !c.Capabilities.ExtendedAgentCard {
				t.Errorf("card %q: no capabilities.extendedAgentCard", v)
			}
		}
		if v != "1.0" {
			if !strings.Contains(scheme, `"type":"http"`) || !strings.Contains(scheme, `"scheme":"Basic"`) {
				t.Errorf("card %q users scheme %s", v, scheme)
			}
			if len(c.Security) != 1 || c.Security[0]["users"] == nil || len(c.Security[0]["users"]) != 0 {
				t.Errorf("card %q security %v", v, c.Security)
			}
			if !c.SupportsAuthenticatedExtendedCard {
				t.Errorf("card %q: no supportsAuthenticatedExtendedCard", v)
			}
		}
	}

	// Without credentials Caddy's basic_auth answers, before the module.
	if a := call(t, base+"/a2a", "1.0", "GetExtendedAgentCard", map[string]any{}); a.Status != 401 {
		t.Fatalf("anonymous GetExtendedAgentCard: %d %s", a.Status, a.Body)
	}

	// Alice gets the extended card, privately cacheable, in each version.
	for _, tt := range []struct{ version, method string }{
		{"1.0", "GetExtendedAgentCard"},
		{"0.3", "agent/getAuthenticatedExtendedCard"},
	} {
		ans := call(t, base+"/a2a", tt.version, tt.method, nil, alice)
		var raw json.RawMessage
		ans.ok(t, &raw)
		c := verify("extended card "+tt.version, raw)
		if c.Description != "The agent, for staff." || c.skillIDs() != "echo,admin" {
			t.Errorf("%s: description %q skills %s", tt.method, c.Description, c.skillIDs())
		}
		if tt.version == "1.0" && (len(c.SecurityRequirements) != 1 || c.Security != nil) {
			t.Errorf("1.0 extended card security: %s %v", c.SecurityRequirements, c.Security)
		}
		// 0.3 callers get the hybrid document, as from the card path.
		if tt.version == "0.3" && (len(c.Security) != 1 || len(c.SecurityRequirements) != 1) {
			t.Errorf("0.3 extended card security: %s %v", c.SecurityRequirements, c.Security)
		}
		if cc := ans.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "private") {
			t.Errorf("%s Cache-Control %q", tt.method, cc)
		}
	}
	r := restDo(t, "GET", restURL+"/extendedAgentCard", "", alice, withHeader("A2A-Version", "1.0"))
	r.ok(t, nil)
	if c := verify("HTTP+JSON extended card", r.Body); c.skillIDs() != "echo,admin" {
		t.Errorf("HTTP+JSON extended card skills %s", c.skillIDs())
	}
}

// TestCardSecurityChallenge: with the caller's identity optional (owner
// from a header a forward_auth would set), an anonymous caller asking for
// the extended card gets 401 with the declared scheme's challenge on every
// binding, and a caller with an identity gets the card; a mount without
// extended_card answers -32004 (1.0) and -32007 (0.3).
func TestCardSecurityChallenge(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, h2cGlobal, minimal("grpc on", "rest_path /a2a/rest", "owner {http.request.header.X-Caller}",
		"security_scheme key apikey header X-Caller", "security key"+securedExtendedCard), map[string]any{"Agent": a.URL()})
	dave := withHeader("X-Caller", "dave")

	ans := call(t, base+"/a2a", "1.0", "GetExtendedAgentCard", map[string]any{})
	if ans.Status != 401 || ans.Header.Get("WWW-Authenticate") != `APIKey realm="a2a"` || ans.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("anonymous JSON-RPC: %d %v %s", ans.Status, ans.Header, ans.Body)
	}
	if ans := call(t, base+"/a2a", "0.3", "agent/getAuthenticatedExtendedCard", nil); ans.Status != 401 {
		t.Fatalf("anonymous 0.3: %d %s", ans.Status, ans.Body)
	}
	r := restDo(t, "GET", restURL+"/extendedAgentCard", "")
	r.fails(t, 401, "UNAUTHENTICATED")
	if r.Header.Get("WWW-Authenticate") != `APIKey realm="a2a"` {
		t.Errorf("HTTP+JSON challenge %q", r.Header.Get("WWW-Authenticate"))
	}
	c := grpcClient(t)
	_, err := c.GetExtendedAgentCard(grpcCtx(t), &a2apb.GetExtendedAgentCardRequest{})
	grpcFails(t, err, codes.Unauthenticated, "UNAUTHENTICATED")

	// Nothing about a task changed: the anonymous calls made none.
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, base+"/a2a", "1.0", "ListTasks", map[string]any{}, dave).ok(t, &list)
	if len(list.Tasks) != 0 {
		t.Errorf("tasks after the anonymous calls: %d", len(list.Tasks))
	}

	var card securedCard
	call(t, base+"/a2a", "1.0", "GetExtendedAgentCard", map[string]any{}, dave).ok(t, &card)
	if card.skillIDs() != "echo,admin" || len(card.Signatures) != 0 {
		t.Errorf("extended card skills %s, %d signatures", card.skillIDs(), len(card.Signatures))
	}
	call(t, base+"/a2a", "1.0", "GetExtendedAgentCard", map[string]any{"tenant": "x"}, dave).fails(t, -32602)
	restDo(t, "GET", restURL+"/extendedAgentCard", "", dave).ok(t, &card)
	if card.Description != "The agent, for staff." {
		t.Errorf("HTTP+JSON extended card description %q", card.Description)
	}
	pc, err := c.GetExtendedAgentCard(grpcCtx(t, "x-caller", "dave"), &a2apb.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pc.GetSkills()) != 2 || pc.GetSkills()[1].GetId() != "admin" || pc.GetSecuritySchemes()["key"].GetApiKeySecurityScheme().GetName() != "X-Caller" {
		t.Errorf("gRPC extended card: %v", pc)
	}
	if got := pc.GetSecurityRequirements(); len(got) != 1 || got[0].GetSchemes()["key"] == nil {
		t.Errorf("gRPC extended card requirements: %v", got)
	}

	// Without extended_card: by version, whoever asks.
	loadGlobal(t, h2cGlobal, minimal("grpc on", "rest_path /a2a/rest", "owner {http.request.header.X-Caller}"), map[string]any{"Agent": a.URL()})
	call(t, base+"/a2a", "1.0", "GetExtendedAgentCard", map[string]any{}, dave).fails(t, -32004)
	call(t, base+"/a2a", "0.3", "agent/getAuthenticatedExtendedCard", nil, dave).fails(t, -32007)
	call(t, base+"/a2a", "1.0", "GetExtendedAgentCard", map[string]any{}).fails(t, -32004)
	restDo(t, "GET", restURL+"/extendedAgentCard", "", dave).fails(t, 400, "FAILED_PRECONDITION")
	c = grpcClient(t)
	_, err = c.GetExtendedAgentCard(grpcCtx(t, "x-caller", "dave"), &a2apb.GetExtendedAgentCardRequest{})
	grpcFails(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = a2apb03.NewA2AServiceClient(conn).GetAgentCard(metadata.NewOutgoingContext(grpcCtx(t), metadata.Pairs("a2a-version", "0.3", "x-caller", "dave")), &a2apb03.GetAgentCardRequest{})
	grpcFails(t, err, codes.FailedPrecondition, "EXTENDED_AGENT_CARD_NOT_CONFIGURED")
}

// TestCardSecurityConfigErrors: what the card cannot say is refused when
// the config loads, naming the directive.
func TestCardSecurityConfigErrors(t *testing.T) {
	for _, tt := range []struct{ extra, want string }{
		{"security_scheme users basic\n\t\tsecurity user", `security: "user" is not declared by a security_scheme`},
		{"security_scheme users basic\n\t\tsecurity users admin", "security: users is a basic scheme; scopes are for oauth2 and openid schemes only"},
		{"security_scheme tv oauth2 {\n\t\t\tdevice_code {\n\t\t\t\tdevice_authorization_url https://id.example.com/d\n\t\t\t\ttoken_url https://id.example.com/t\n\t\t\t}\n\t\t}",
			"security_scheme tv: device_code has no A2A 0.3 form"},
		{"url http://127.0.0.1:9080/a2a\n\t\tsign_card /nonexistent/card.pem", "sign_card: open /nonexistent/card.pem"},
		{"sign_card /nonexistent/card.pem", signCardNoURL},
	} {
		cfg := strings.ReplaceAll(minimal(tt.extra), "{{.Agent}}", "http://127.0.0.1:9")
		if e := loadError(t, cfg); !strings.Contains(e, tt.want) {
			t.Errorf("%s:\n  got  %s\n  want %s", tt.extra, e, tt.want)
		}
	}
}
