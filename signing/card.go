package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// cardSignaturesMember is the card member A2A 1.0 §8.4 reserves for the
// signatures; it is the one member the signed payload leaves out.
const cardSignaturesMember = "signatures"

// cardSignatureType is the typ of a card signature's protected header:
// A2A names "JOSE", the generic JWS type, so a card signature cannot be
// mistaken for (or replayed as) a JWT the module also issues.
const cardSignatureType = "JOSE"

// cardAlgorithms are the JWS algorithms VerifyCard accepts: asymmetric
// ones only, so neither "none" nor an HMAC keyed with a public key can
// pass.
var cardAlgorithms = []jose.SignatureAlgorithm{
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
}

// cardSignature is one entry of a card's signatures member (A2A 1.0
// §8.4): a JWS in the JSON serialization minus its payload, which is
// detached because it is the card itself.
type cardSignature struct {
	// Protected is the base64url of the protected header's JSON.
	Protected string `json:"protected"`
	// Signature is the base64url of the JWS signature.
	Signature string `json:"signature"`
	// Header is the unprotected header; SignCard never writes one, since
	// nothing in it would be signed.
	Header json.RawMessage `json:"header,omitempty"`
}

// SignCard returns doc, a rendered Agent Card JSON object without a
// signatures member, with a signatures member holding one signature by k
// appended as its last member. kid "" names the key by k.KeyID(); jku, if
// set, is the URL of the JWKS holding the key and goes in the protected
// header.
//
// The payload is detached (A2A 1.0 §8.4): the card already travels as the
// document, so a verifier removes signatures, canonicalises the rest with
// RFC 8785 (JCS) and checks the JWS over
// b64url(header) "." b64url(JCS(card)). Canonicalising the very bytes that
// will be served, rather than a struct re-marshalled later, is what makes
// the signature cover what clients receive; JCS then makes member order
// and insignificant whitespace irrelevant to verifiers. The signatures are
// appended before the closing brace, leaving doc's bytes otherwise
// untouched, so the server can serve exactly the signed bytes without
// re-marshalling the card (which could reorder members or re-escape
// strings).
func (k *Key) SignCard(doc []byte, kid, jku string) ([]byte, error) {
	payload, err := canonical(doc)
	if err != nil {
		return nil, fmt.Errorf("card signing: %v", err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil || members == nil {
		return nil, errors.New("card signing: the card is not a JSON object")
	}
	if _, ok := members[cardSignaturesMember]; ok {
		return nil, errors.New("card signing: the card already has a signatures member; sign the card without it")
	}
	if kid == "" {
		kid = k.KeyID()
	}
	opts := (&jose.SignerOptions{}).WithType(cardSignatureType).WithHeader("kid", kid)
	if jku != "" {
		opts = opts.WithHeader("jku", jku)
	}
	// The raw key, not k.private, so the header's kid is the one given
	// here rather than go-jose's copy from the JWK.
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.private.Key}, opts)
	if err != nil {
		return nil, fmt.Errorf("card signing: %v", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return nil, fmt.Errorf("card signing: %v", err)
	}
	compact, err := jws.DetachedCompactSerialize()
	if err != nil {
		return nil, fmt.Errorf("card signing: %v", err)
	}
	protected, signature, ok := strings.Cut(compact, "..")
	if !ok {
		return nil, fmt.Errorf("card signing: unexpected detached JWS %q", compact)
	}
	sigs, err := json.Marshal([]cardSignature{{Protected: protected, Signature: signature}})
	if err != nil {
		return nil, fmt.Errorf("card signing: %v", err)
	}

	// json.Valid and the object check above guarantee the last
	// non-whitespace byte is the object's closing brace; whatever follows
	// it (a trailing newline) is kept.
	end := len(bytes.TrimRight(doc, " \t\r\n")) - 1
	out := make([]byte, 0, len(doc)+len(sigs)+len(cardSignaturesMember)+4)
	out = append(out, doc[:end]...)
	if len(members) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"`+cardSignaturesMember+`":`...)
	out = append(out, sigs...)
	out = append(out, doc[end:]...)
	return out, nil
}

// VerifyCard checks the signatures of a signed Agent Card against keys,
// picking the key for each signature by the kid of its protected header.
// It exists so tests, and the module checking its own output before
// serving it, verify the way a client would: from the document alone,
// with the payload rebuilt by JCS rather than trusted from the signer.
//
// It succeeds when at least one signature verifies and none is malformed
// (undecodable, no kid, typ not JOSE, an algorithm outside the asymmetric
// ones, b64 or crit headers) and none fails against a key its kid names;
// a signature whose kid matches none of keys is skipped, so a card signed
// by several keys verifies with any one of them. The unprotected header,
// if any, is ignored: nothing in it is signed.
func VerifyCard(doc []byte, keys ...jose.JSONWebKey) error {
	// Decoding to a map below keeps only the last of duplicate members,
	// which a client's parser may not; canonical refuses them.
	if _, err := canonical(doc); err != nil {
		return fmt.Errorf("card signature: %v", err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil || members == nil {
		return errors.New("card signature: the card is not a JSON object")
	}
	rawSigs, ok := members[cardSignaturesMember]
	if !ok {
		return errors.New("card signature: the card has no signatures member")
	}
	var sigs []cardSignature
	if err := json.Unmarshal(rawSigs, &sigs); err != nil {
		return fmt.Errorf("card signature: signatures is not a list of signatures: %v", err)
	}
	if len(sigs) == 0 {
		return errors.New("card signature: the signatures list is empty")
	}
	delete(members, cardSignaturesMember)
	unsigned, err := json.Marshal(members)
	if err != nil {
		return fmt.Errorf("card signature: %v", err)
	}
	// JCS of the re-marshalled map equals JCS of the signer's bytes: it
	// sorts members and normalises escapes and numbers, so neither Go's
	// map order nor its HTML escaping matters.
	payload, err := jcs.Transform(unsigned)
	if err != nil {
		return fmt.Errorf("card signature: canonicalising the card: %v", err)
	}

	verified := 0
	var skipped []string
	for i, sig := range sigs {
		kid, err := verifyCardSignature(sig, payload, keys)
		switch {
		case errors.Is(err, errNoCardKey):
			skipped = append(skipped, fmt.Sprintf("%q", kid))
		case err != nil:
			return fmt.Errorf("card signature %d (kid %q): %w", i, kid, err)
		default:
			verified++
		}
	}
	if verified == 0 {
		return fmt.Errorf("card signature: no key given for kid %s", strings.Join(skipped, ", "))
	}
	return nil
}

// canonical is the JCS form of doc, refusing a doc whose JCS form would
// not mean what the doc means to a JSON parser. The jcs package is lenient
// where that matters for signatures: it returns a prefix of truncated
// input without error, passes invalid UTF-8 through, and turns an unpaired
// surrogate escape and the escape after it into one U+FFFD; each would let
// two different cards share a signature. So the doc must be valid UTF-8
// JSON, and decode to the same values as its JCS form (numbers compare as
// float64, which is how JCS reads them). JCS also refuses duplicate member
// names, whose meaning depends on the parser.
func canonical(doc []byte) ([]byte, error) {
	if !utf8.Valid(doc) || !json.Valid(doc) {
		return nil, errors.New("the card is not valid UTF-8 JSON")
	}
	out, err := jcs.Transform(doc)
	if err != nil {
		return nil, fmt.Errorf("canonicalising the card: %v", err)
	}
	var before, after any
	if err := json.Unmarshal(doc, &before); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &after); err != nil || !reflect.DeepEqual(before, after) {
		return nil, errors.New("the card's canonical (RFC 8785) form differs from the card; check for unpaired surrogate escapes")
	}
	return out, nil
}

// errNoCardKey marks a well-formed signature by a key VerifyCard was not
// given: not a failure by itself, since a card may carry signatures for
// verifiers that trust other keys.
var errNoCardKey = errors.New("no key for this kid")

// verifyCardSignature verifies one signature over payload and returns its
// kid (for messages) and why it failed, errNoCardKey if no key matched.
func verifyCardSignature(sig cardSignature, payload []byte, keys []jose.JSONWebKey) (string, error) {
	if sig.Protected == "" || sig.Signature == "" {
		return "", errors.New("protected and signature are both required")
	}
	if len(sig.Header) > 0 {
		var unprotected map[string]json.RawMessage
		if err := json.Unmarshal(sig.Header, &unprotected); err != nil || unprotected == nil {
			return "", errors.New("header is not a JSON object")
		}
	}
	jws, err := jose.ParseDetached(sig.Protected+".."+sig.Signature, payload, cardAlgorithms)
	if err != nil {
		return "", err
	}
	h := jws.Signatures[0].Protected
	kid := h.KeyID
	if kid == "" {
		return "", errors.New("the protected header has no kid")
	}
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, cardSignatureType) {
		return kid, fmt.Errorf("protected header typ %q, want %q", typ, cardSignatureType)
	}
	// b64:false would make go-jose sign the raw payload, and crit would
	// make the verifier's understanding part of the contract: A2A uses
	// neither, so either is a sign the signature is not a card signature.
	for _, name := range []jose.HeaderKey{"b64", "crit"} {
		if _, ok := h.ExtraHeaders[name]; ok {
			return kid, fmt.Errorf("protected header has %q", name)
		}
	}
	matched := false
	for _, key := range keys {
		if key.KeyID != kid {
			continue
		}
		matched = true
		if key.Algorithm != "" && key.Algorithm != h.Algorithm {
			return kid, fmt.Errorf("alg %s, but the key is for %s", h.Algorithm, key.Algorithm)
		}
		// Public() also accepts a private JWK and yields nothing for a
		// symmetric one, which must never verify a card.
		pub := key.Public()
		if !pub.Valid() {
			return kid, errors.New("the key for this kid is not an asymmetric key")
		}
		if err := jws.DetachedVerify(payload, pub); err == nil {
			return kid, nil
		}
	}
	if !matched {
		return kid, errNoCardKey
	}
	return kid, errors.New("the signature does not verify: the card or the signature was changed, or it is another key's")
}
