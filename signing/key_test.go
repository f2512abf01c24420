package signing

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func pemOf(t *testing.T, typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pkcs8(t *testing.T, k any) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pemOf(t, "PRIVATE KEY", der)
}

func TestLoadAndVerify(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecDER, _ := x509.MarshalECPrivateKey(ec)
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: ec, KeyID: "my-kid"})
	for _, tc := range []struct {
		name, alg, kid string
		data           []byte
	}{
		{"EC PKCS8", "ES256", "", pkcs8(t, ec)},
		{"EC SEC1", "ES256", "", pemOf(t, "EC PRIVATE KEY", ecDER)},
		{"Ed25519", "EdDSA", "", pkcs8(t, ed)},
		{"RSA PKCS1", "RS256", "", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rs))},
		{"RSA PKCS8", "RS256", "", pkcs8(t, rs)},
		{"EC JWK", "ES256", "my-kid", jwk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := Load(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if k.Algorithm() != tc.alg || (tc.kid != "" && k.KeyID() != tc.kid) || k.KeyID() == "" {
				t.Fatalf("alg %s kid %q", k.Algorithm(), k.KeyID())
			}
			now := time.Now()
			tok, err := k.SignPush(PushClaims{Issuer: "https://agent.example", Audience: "https://hook.example/x", TaskID: "t1", BodySHA256: "ab12",
				JKU: "https://agent.example/.well-known/jwks.json"}, now)
			if err != nil {
				t.Fatal(err)
			}
			// Verify as a receiver does: the key from the published JWKS
			// by the token's kid.
			raw, err := JWKS(k)
			if err != nil {
				t.Fatal(err)
			}
			var set jose.JSONWebKeySet
			if err := json.Unmarshal(raw, &set); err != nil {
				t.Fatal(err)
			}
			parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA, jose.RS256})
			if err != nil {
				t.Fatal(err)
			}
			if parsed.Headers[0].KeyID != k.KeyID() || parsed.Headers[0].ExtraHeaders["jku"] != "https://agent.example/.well-known/jwks.json" {
				t.Fatalf("header %+v", parsed.Headers[0])
			}
			keys := set.Key(parsed.Headers[0].KeyID)
			if len(keys) != 1 || !keys[0].IsPublic() {
				t.Fatalf("JWKS: %s", raw)
			}
			var std jwt.Claims
			var extra struct {
				TaskID string `json:"taskId"`
				Body   string `json:"request_body_sha256"`
			}
			if err := parsed.Claims(keys[0].Key, &std, &extra); err != nil {
				t.Fatal(err)
			}
			if err := std.ValidateWithLeeway(jwt.Expected{Issuer: "https://agent.example", AnyAudience: jwt.Audience{"https://hook.example/x"}, Time: now}, 0); err != nil {
				t.Fatal(err)
			}
			if extra.TaskID != "t1" || extra.Body != "ab12" || std.ID == "" || std.Expiry.Time().Sub(std.IssuedAt.Time()) != PushLifetime {
				t.Fatalf("claims %+v %+v", std, extra)
			}
			if strings.Contains(string(raw), `"d"`) {
				t.Fatalf("the JWKS holds private material: %s", raw)
			}
		})
	}
}

func TestLoadRefuses(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pubJWK, _ := json.Marshal(jose.JSONWebKey{Key: &ec.PublicKey})
	pubDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"P-384":      {pkcs8(t, p384), "use P-256"},
		"RSA 1024":   {pkcs8(t, small), "at least 2048"},
		"public JWK": {pubJWK, "public key"},
		"public PEM": {pemOf(t, "PUBLIC KEY", pubDER), "not a private key"},
		"garbage":    {[]byte("hello"), "neither a JWK nor PEM"},
	} {
		if _, err := Load(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
