package signing

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testCard has what JCS normalises (member order, an escape, a number
// with a trailing zero, nesting) so a payload built from it differs from
// the doc's bytes.
const testCard = `{"name":"Echo \u00e9","url":"https://agent.example/a2a","version":"1.0.0","capabilities":{"streaming":true,"pushNotifications":false},"skills":[{"id":"echo","tags":["a","b"]}],"ratio":1.50}`

// testCardReordered is testCard with its members (and nested ones) in
// another order and re-encoded ("é" unescaped, 1.5, whitespace): the same
// card to JCS.
const testCardReordered = `{ "ratio": 1.5, "skills": [{"tags":["a","b"],"id":"echo"}], "capabilities": {"pushNotifications":false,"streaming":true}, "version":"1.0.0", "url":"https://agent.example/a2a", "name":"Echo é" }`

// publicOf is k's public JWK as a client gets it: through the JWKS.
func publicOf(t *testing.T, k *Key) jose.JSONWebKey {
	t.Helper()
	raw, err := JWKS(k)
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	return set.Keys[0]
}

func loadKey(t *testing.T, priv any) *Key {
	t.Helper()
	k, err := Load(pkcs8(t, priv))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signatureOf is the one signature of a signed card.
func signatureOf(t *testing.T, signed []byte) cardSignature {
	t.Helper()
	var card struct {
		Signatures []cardSignature `json:"signatures"`
	}
	if err := json.Unmarshal(signed, &card); err != nil {
		t.Fatal(err)
	}
	if len(card.Signatures) != 1 {
		t.Fatalf("%d signatures in %s", len(card.Signatures), signed)
	}
	return card.Signatures[0]
}

// withSignatures is doc with the signatures member of signed put last, as
// SignCard would have.
func withSignatures(doc string, signed []byte) []byte {
	i := bytes.Index(signed, []byte(`,"signatures":`))
	return append([]byte(strings.TrimSuffix(strings.TrimSpace(doc), "}")), signed[i:]...)
}

func TestSignCard(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	for _, tc := range []struct {
		name, alg string
		priv, alt any
	}{
		{"EC P-256", "ES256", ec, mustEC(t)},
		{"Ed25519", "EdDSA", ed, mustEd(t)},
		{"RSA 2048", "RS256", rs, mustRSA(t)},
	} {
		for _, hdr := range []struct{ name, kid, jku string }{
			{"thumbprint kid", "", ""},
			{"given kid and jku", "card-key-1", "https://agent.example/.well-known/jwks.json"},
		} {
			t.Run(tc.name+"/"+hdr.name, func(t *testing.T) {
				k := loadKey(t, tc.priv)
				signed, err := k.SignCard([]byte(testCard), hdr.kid, hdr.jku)
				if err != nil {
					t.Fatal(err)
				}
				wantKid := hdr.kid
				if wantKid == "" {
					wantKid = k.KeyID()
				}
				pub := publicOf(t, k)
				pub.KeyID = wantKid

				// The doc's bytes, then the signatures, then its brace.
				sig := signatureOf(t, signed)
				sigs, _ := json.Marshal([]cardSignature{sig})
				want := testCard[:len(testCard)-1] + `,"signatures":` + string(sigs) + `}`
				if string(signed) != want {
					t.Fatalf("signed card\n%s\nwant\n%s", signed, want)
				}

				// The protected header is exactly alg, kid, typ (+ jku).
				rawHdr, err := base64.RawURLEncoding.DecodeString(sig.Protected)
				if err != nil {
					t.Fatal(err)
				}
				var gotHdr map[string]any
				if err := json.Unmarshal(rawHdr, &gotHdr); err != nil {
					t.Fatal(err)
				}
				wantHdr := map[string]any{"alg": tc.alg, "kid": wantKid, "typ": "JOSE"}
				if hdr.jku != "" {
					wantHdr["jku"] = hdr.jku
				}
				if g, w := mustJSON(t, gotHdr), mustJSON(t, wantHdr); g != w {
					t.Fatalf("protected header %s, want %s", g, w)
				}

				// The signed payload is JCS of the doc: re-attach it and
				// verify as an ordinary compact JWS.
				payload, err := jcs.Transform([]byte(testCard))
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Equal(payload, []byte(testCard)) {
					t.Fatal("the test card is already canonical; it proves nothing about JCS")
				}
				compact := sig.Protected + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + sig.Signature
				jws, err := jose.ParseSigned(compact, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(tc.alg)})
				if err != nil {
					t.Fatal(err)
				}
				got, err := jws.Verify(pub)
				if err != nil {
					t.Fatalf("the signature is not over JCS(doc): %v", err)
				}
				if !bytes.Equal(got, payload) {
					t.Fatalf("payload %s, want %s", got, payload)
				}

				if err := VerifyCard(signed, pub); err != nil {
					t.Fatalf("VerifyCard: %v", err)
				}
				// Same card to JCS, so the signature still holds: member
				// order, escapes, number spelling, whitespace, and where
				// signatures sits.
				if err := VerifyCard(withSignatures(testCardReordered, signed), pub); err != nil {
					t.Fatalf("VerifyCard of the reordered card: %v", err)
				}
				sigsFirst := []byte(`{"signatures":` + string(sigs) + `,` + testCardReordered[1:])
				if err := VerifyCard(sigsFirst, pub); err != nil {
					t.Fatalf("VerifyCard with signatures first: %v", err)
				}

				wrongKey := loadKey(t, tc.alt)
				wrong := publicOf(t, wrongKey)
				forged := wrong
				forged.KeyID = wantKid
				for name, c := range map[string]struct {
					doc  []byte
					keys []jose.JSONWebKey
					want string
				}{
					"one byte of a string": {bytes.Replace(signed, []byte(`"echo"`), []byte(`"echp"`), 1), []jose.JSONWebKey{pub}, "does not verify"},
					"a member added":       {append([]byte(`{"extra":1,`), signed[1:]...), []jose.JSONWebKey{pub}, "does not verify"},
					"a member removed":     {bytes.Replace(signed, []byte(`"version":"1.0.0",`), nil, 1), []jose.JSONWebKey{pub}, "does not verify"},
					"a nested member":      {bytes.Replace(signed, []byte(`"streaming":true`), []byte(`"streaming":false`), 1), []jose.JSONWebKey{pub}, "does not verify"},
					"another key":          {signed, []jose.JSONWebKey{wrong}, "no key given"},
					"another key, our kid": {signed, []jose.JSONWebKey{forged}, "does not verify"},
					"no keys":              {signed, nil, "no key given"},
					"the signature": {bytes.Replace(signed, []byte(sig.Signature), []byte(flipChar(sig.Signature)), 1),
						[]jose.JSONWebKey{pub}, "does not verify"},
				} {
					if err := VerifyCard(c.doc, c.keys...); err == nil || !strings.Contains(err.Error(), c.want) {
						t.Errorf("%s: VerifyCard = %v, want %q", name, err, c.want)
					}
				}
				// A card signed by two keys verifies with either alone.
				byWrong, err := wrongKey.SignCard([]byte(testCard), "", "")
				if err != nil {
					t.Fatal(err)
				}
				both := mustJSON(t, []cardSignature{sig, signatureOf(t, byWrong)})
				signedTwice := []byte(testCard[:len(testCard)-1] + `,"signatures":` + both + `}`)
				for _, key := range []jose.JSONWebKey{pub, wrong} {
					if err := VerifyCard(signedTwice, key); err != nil {
						t.Errorf("two signatures, key %s: %v", key.KeyID, err)
					}
				}
			})
		}
	}
}

func mustEC(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustEd(t *testing.T) ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustRSA(t *testing.T) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// flipChar changes the middle character of a base64url string to another
// base64url character.
func flipChar(s string) string {
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestSignCardKeepsTrailingBytes(t *testing.T) {
	k := loadKey(t, mustEd(t))
	for _, doc := range []string{"{\"a\":1}\n", "{\"a\":1 }", "{}"} {
		signed, err := k.SignCard([]byte(doc), "", "")
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		sigs, _ := json.Marshal([]cardSignature{signatureOf(t, signed)})
		end := strings.LastIndexByte(doc, '}')
		sep := ","
		if doc == "{}" {
			sep = ""
		}
		if want := doc[:end] + sep + `"signatures":` + string(sigs) + doc[end:]; string(signed) != want {
			t.Errorf("%q signed to %q, want %q", doc, signed, want)
		}
		if err := VerifyCard(signed, publicOf(t, k)); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
}

func TestSignCardRefuses(t *testing.T) {
	k := loadKey(t, mustEd(t))
	for name, tc := range map[string]struct{ doc, want string }{
		"signatures member":  {`{"name":"x","signatures":[]}`, "already has a signatures member"},
		"escaped signatures": {`{"name":"x","signatur\u0065s":[]}`, "already has a signatures member"},
		"array":              {`[{"name":"x"}]`, "not a JSON object"},
		"string":             {`"card"`, "not a JSON object"},
		"null":               {`null`, "not a JSON object"},
		"truncated":          {`{"name":"x","url`, "not valid UTF-8 JSON"},
		"trailing garbage":   {`{"name":"x"}x`, "not valid UTF-8 JSON"},
		"invalid UTF-8":      {"{\"name\":\"\xff\"}", "not valid UTF-8 JSON"},
		"duplicate member":   {`{"name":"x","name":"y"}`, "Duplicate key"},
		"unpaired surrogate": {`{"name":"\udc00\u0041"}`, "canonical (RFC 8785) form differs"},
	} {
		if _, err := k.SignCard([]byte(tc.doc), "", ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestVerifyCardRefuses(t *testing.T) {
	k := loadKey(t, mustEd(t))
	pub := publicOf(t, k)
	signed, err := k.SignCard([]byte(testCard), "", "")
	if err != nil {
		t.Fatal(err)
	}
	sig := signatureOf(t, signed)
	payload, _ := jcs.Transform([]byte(testCard))

	// resign is a signature over the card with a protected header of
	// our choosing, by k, so only the header is wrong.
	resign := func(hdr map[string]any) cardSignature {
		t.Helper()
		opts := &jose.SignerOptions{}
		alg := jose.EdDSA
		for name, v := range hdr {
			if name == "alg" {
				alg = jose.SignatureAlgorithm(v.(string))
				continue
			}
			opts = opts.WithHeader(jose.HeaderKey(name), v)
		}
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k.private.Key}, opts)
		if err != nil {
			t.Fatal(err)
		}
		jws, err := s.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		c, err := jws.DetachedCompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		p, s2, _ := strings.Cut(c, "..")
		return cardSignature{Protected: p, Signature: s2}
	}
	none := cardSignature{
		Protected: base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"` + k.KeyID() + `","typ":"JOSE"}`)),
		Signature: "AA",
	}
	card := func(sigs any) []byte {
		return withSignatures(testCard, []byte(`,"signatures":`+mustJSON(t, sigs)+`}`))
	}
	kid := k.KeyID()
	for name, tc := range map[string]struct {
		doc  []byte
		want string
	}{
		"no signatures":       {[]byte(testCard), "no signatures member"},
		"empty signatures":    {card([]cardSignature{}), "list is empty"},
		"signatures object":   {card(map[string]string{}), "not a list"},
		"no protected":        {card([]map[string]string{{"signature": sig.Signature}}), "both required"},
		"not base64":          {card([]cardSignature{{Protected: "%%%", Signature: sig.Signature}}), "illegal base64"},
		"alg none":            {card([]cardSignature{none}), "unexpected signature algorithm"},
		"no kid":              {card([]cardSignature{resign(map[string]any{"typ": "JOSE"})}), "no kid"},
		"no typ":              {card([]cardSignature{resign(map[string]any{"kid": kid})}), `typ ""`},
		"typ JWT":             {card([]cardSignature{resign(map[string]any{"kid": kid, "typ": "JWT"})}), `typ "JWT"`},
		"b64":                 {card([]cardSignature{resign(map[string]any{"kid": kid, "typ": "JOSE", "b64": true})}), `"b64"`},
		"header not object":   {card([]map[string]any{{"protected": sig.Protected, "signature": sig.Signature, "header": 1}}), "not a JSON object"},
		"malformed and valid": {card([]cardSignature{sig, {Protected: sig.Protected}}), "card signature 1"},
		"duplicate member":    {[]byte(`{"name":"evil",` + string(signed[1:])), "Duplicate key"},
		"not an object":       {[]byte(`[` + string(signed) + `]`), "not a JSON object"},
	} {
		if err := VerifyCard(tc.doc, pub); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	// The control: resign with the right header verifies, so the cases
	// above fail for their header alone.
	if err := VerifyCard(card([]cardSignature{resign(map[string]any{"kid": kid, "typ": "JOSE"})}), pub); err != nil {
		t.Fatal(err)
	}
	// An unprotected header is allowed and ignored.
	if err := VerifyCard(card([]map[string]any{{"protected": sig.Protected, "signature": sig.Signature, "header": map[string]string{"kid": "other"}}}), pub); err != nil {
		t.Fatal(err)
	}
	// A symmetric key named by the kid never verifies.
	sym := jose.JSONWebKey{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: kid}
	if err := VerifyCard(signed, sym); err == nil || !strings.Contains(err.Error(), "not an asymmetric key") {
		t.Fatalf("symmetric key: %v", err)
	}
}

// TestSignCardGolden pins the exact bytes, which Ed25519's deterministic
// signatures make possible: a change to the header, the payload or the
// splice shows here even if sign and verify still agree with each other.
func TestSignCardGolden(t *testing.T) {
	seed := bytes.Repeat([]byte{0x01}, ed25519.SeedSize)
	k := loadKey(t, ed25519.NewKeyFromSeed(seed))
	doc := []byte(`{"name":"Golden","version":"1.0.0","url":"https://agent.example/a2a","capabilities":{}}` + "\n")
	signed, err := k.SignCard(doc, "", "https://agent.example/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyCard(signed, publicOf(t, k)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "card_signed.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, signed, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(signed, want) {
		t.Fatalf("signed card\n%s\nwant (%s)\n%s", signed, path, want)
	}
}
