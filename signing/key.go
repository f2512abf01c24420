// Package signing loads the keys a mount signs with and signs with them:
// one loader for every signature the module makes (push deliveries
// today), and the JWKS that publishes their public halves. JOSE is
// go-jose's; nothing here is hand-written cryptography.
package signing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
)

// Key is a private key with its JWS algorithm and its public JWK (kid:
// the RFC 7638 thumbprint, unless a JWK named its own).
type Key struct {
	alg    jose.SignatureAlgorithm
	signer jose.Signer
	public jose.JSONWebKey
	// private signs with a header of its own (jku) per token.
	private jose.JSONWebKey
}

// minRSABits is the smallest RSA key accepted.
const minRSABits = 2048

// Load reads a private key: a JWK (JSON) or PEM (PKCS #8, SEC 1 "EC
// PRIVATE KEY", PKCS #1 "RSA PRIVATE KEY"); EC P-256 (ES256), Ed25519
// (EdDSA) or RSA of at least 2048 bits (RS256).
func Load(data []byte) (*Key, error) {
	var priv any
	kid := ""
	if trimmed := trimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		var jwk jose.JSONWebKey
		if err := json.Unmarshal(trimmed, &jwk); err != nil {
			return nil, fmt.Errorf("signing key: not a JWK: %v", err)
		}
		if jwk.IsPublic() {
			return nil, errors.New("signing key: the JWK is a public key; give the private key")
		}
		priv, kid = jwk.Key, jwk.KeyID
	} else {
		block, _ := pem.Decode(data)
		if block == nil {
			return nil, errors.New("signing key: neither a JWK nor PEM")
		}
		var err error
		switch block.Type {
		case "PRIVATE KEY":
			priv, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			priv, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			priv, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			return nil, fmt.Errorf("signing key: PEM block %q is not a private key", block.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("signing key: %v", err)
		}
	}
	return newKey(priv, kid)
}

func newKey(priv any, kid string) (*Key, error) {
	var alg jose.SignatureAlgorithm
	var pub crypto.PublicKey
	switch k := priv.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("signing key: EC curve %s; use P-256", k.Curve.Params().Name)
		}
		alg, pub = jose.ES256, &k.PublicKey
	case ed25519.PrivateKey:
		alg, pub = jose.EdDSA, k.Public()
	case *rsa.PrivateKey:
		if k.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("signing key: RSA key of %d bits; use at least %d", k.N.BitLen(), minRSABits)
		}
		alg, pub = jose.RS256, &k.PublicKey
	default:
		return nil, fmt.Errorf("signing key: %T keys are not supported; use EC P-256, Ed25519 or RSA", priv)
	}
	public := jose.JSONWebKey{Key: pub, Algorithm: string(alg), Use: "sig"}
	if kid == "" {
		tp, err := public.Thumbprint(crypto.SHA256)
		if err != nil {
			return nil, err
		}
		kid = base64.RawURLEncoding.EncodeToString(tp)
	}
	public.KeyID = kid
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: priv, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	return &Key{alg: alg, signer: signer, public: public, private: jose.JSONWebKey{Key: priv, KeyID: kid}}, nil
}

// KeyID is the key's kid.
func (k *Key) KeyID() string { return k.public.KeyID }

// Algorithm is the key's JWS algorithm.
func (k *Key) Algorithm() string { return string(k.alg) }

// JWKS is the JSON Web Key Set of the public halves of keys (nil ones
// skipped, one entry per kid).
func JWKS(keys ...*Key) ([]byte, error) {
	set := jose.JSONWebKeySet{}
	seen := map[string]bool{}
	for _, k := range keys {
		// One key used for two things (push and the card) is listed once.
		if k == nil || seen[k.public.KeyID] {
			continue
		}
		seen[k.public.KeyID] = true
		set.Keys = append(set.Keys, k.public)
	}
	return json.Marshal(set)
}

// PushClaims are what a signed push delivery asserts.
type PushClaims struct {
	// Issuer is the mount's public base URL, Audience the webhook URL.
	Issuer, Audience string
	TaskID           string
	// BodySHA256 is the hex SHA-256 of the exact body delivered.
	BodySHA256 string
	// JKU, when set, is the URL of the JWKS holding the key, put in the
	// token's header.
	JKU string
}

// PushLifetime is how long a delivery's signature is valid: long enough
// for a receiver's clock to lag, short enough that a recorded delivery
// cannot be replayed later (receivers also remember jti).
const PushLifetime = 5 * time.Minute

// SignPush returns the compact JWT of c, issued at now.
func (k *Key) SignPush(c PushClaims, now time.Time) (string, error) {
	std := jwt.Claims{
		Issuer:   c.Issuer,
		Audience: jwt.Audience{c.Audience},
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(PushLifetime)),
		ID:       uuid.NewString(),
	}
	extra := struct {
		TaskID     string `json:"taskId"`
		BodySHA256 string `json:"request_body_sha256"`
	}{c.TaskID, c.BodySHA256}
	signer := k.signer
	if c.JKU != "" {
		var err error
		signer, err = jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.private},
			(&jose.SignerOptions{}).WithType("JWT").WithHeader("jku", c.JKU))
		if err != nil {
			return "", err
		}
	}
	return jwt.Signed(signer).Claims(std).Claims(extra).Serialize()
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// WithKeyID is k under the kid given: what its JWKS entry and its
// signatures name it by, for an operator who names keys (rotation by
// name) rather than by thumbprint.
func (k *Key) WithKeyID(kid string) (*Key, error) { return newKey(k.private.Key, kid) }
