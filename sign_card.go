package caddya2a

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/signing"
)

// SignCard signs every rendering of the card (0.3, 1.0, hybrid, the
// extended card): each carries signatures, a JWS over the RFC 8785
// canonical form of that very document, so a client can trust a card
// however it fetched it. The public key is in the mount's JWKS.
type SignCard struct {
	// Key is the file of a private key (JWK or PEM; EC P-256, Ed25519
	// or RSA of at least 2048 bits), read with push's signing_key loader.
	// Required.
	Key string `json:"key,omitempty"`
	// KID names the key in the signatures and the JWKS. Default: its RFC
	// 7638 thumbprint (or a JWK's own kid).
	KID string `json:"kid,omitempty"`
	// JKU is the JWKS URL put in each signature's header. Default: the
	// JWKS this mount serves, on the card's own base URL.
	JKU string `json:"jku,omitempty"`

	key *signing.Key
}

// provision reads the key.
func (s *SignCard) provision() error {
	if s == nil {
		return nil
	}
	if s.Key == "" {
		return errors.New("sign_card: a key file is required")
	}
	data, err := os.ReadFile(s.Key)
	if err != nil {
		return fmt.Errorf("sign_card: %v", err)
	}
	if s.key, err = signing.Load(data); err != nil {
		return fmt.Errorf("sign_card: %s: %v", s.Key, err)
	}
	if s.KID != "" {
		if s.key, err = s.key.WithKeyID(s.KID); err != nil {
			return fmt.Errorf("sign_card: %v", err)
		}
	}
	return nil
}

// errSignCardURL refuses a signed card whose URLs would come from the
// request: without url, the card's interface URLs (and the default jku)
// are made of each request's Host, so anyone could have a validly signed
// card name the host and port of their choice.
var errSignCardURL = errors.New("sign_card: url is required: without it the card's URLs come from each request's Host header, a caller's choice, and the card would sign them; set url to the agent's public JSON-RPC URL")

// check refuses a sign_card without a key, without the mount's url (the
// one source of the card's interface URLs a signature may vouch for:
// hasURL) and with a jku that is not an absolute URL.
func (s *SignCard) check(hasURL bool) error {
	if s == nil {
		return nil
	}
	if s.Key == "" {
		return errors.New("sign_card: a key file is required")
	}
	if !hasURL {
		return errSignCardURL
	}
	if s.JKU != "" {
		if _, err := checkAbsoluteURL(s.JKU); err != nil {
			return fmt.Errorf("sign_card: jku: %w", err)
		}
	}
	return nil
}

// unmarshalSignCard parses `sign_card <key-file> { kid <id>; jku <url> }`.
func (h *Handler) unmarshalSignCard(d *caddyfile.Dispenser) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	s := &SignCard{Key: d.Val()}
	if d.NextArg() {
		return d.ArgErr()
	}
	if err := subdirectives(d, "sign_card", nil, func(key string) error {
		var err error
		switch key {
		case "kid":
			s.KID, err = oneArg(d)
		case "jku":
			s.JKU, err = oneArg(d)
		default:
			return unknownSubdirective(d, "sign_card", key, signCardKeys)
		}
		return err
	}); err != nil {
		return err
	}
	h.SignCard = s
	return nil
}

var signCardKeys = []string{"kid", "jku"}

// provisionJWKS makes the JWKS of every key the mount signs with (push
// deliveries, cards): served at push's jwks_path, or the default path
// when only the card is signed.
func (h *Handler) provisionJWKS() error {
	h.jwks, h.jwksPath = nil, ""
	var keys []*signing.Key
	if h.Push != nil && h.Push.key != nil {
		keys, h.jwksPath = append(keys, h.Push.key), h.Push.JWKSPath
	}
	if h.SignCard != nil && h.SignCard.key != nil {
		keys = append(keys, h.SignCard.key)
		if h.jwksPath == "" {
			h.jwksPath = DefaultJWKSPath
		}
	}
	if len(keys) == 0 {
		return nil
	}
	var err error
	h.jwks, err = signing.JWKS(keys...)
	return err
}

// signCards makes the card servers sign what they render.
func (h *Handler) signCards(servers ...*httpbind.CardServer) {
	s := h.SignCard
	if s == nil || s.key == nil {
		return
	}
	sign := func(doc []byte, urls httpbind.CardURLs) ([]byte, error) {
		jku := s.JKU
		if jku == "" {
			jku = h.baseURL(urls.RPC) + h.jwksPath
		}
		return s.key.SignCard(doc, "", jku)
	}
	for _, c := range servers {
		if c != nil {
			c.SignWith(sign)
		}
	}
}

// serveJWKS answers the JWKS: public, cacheable, readable from any page.
func (h *Handler) serveJWKS(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "a2a: the JWKS answers GET", http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/jwk-set+json")
	hd.Set("Cache-Control", "public, max-age=300")
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Content-Length", strconv.Itoa(len(h.jwks)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(h.jwks)
	}
}
