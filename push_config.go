package caddya2a

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/push"
	"github.com/caddy-a2a/caddy-a2a/signing"
)

// Push turns push notifications on: the card says
// capabilities.pushNotifications, the config methods of both versions are
// served, and every change of a task with configs is delivered to their
// webhooks. Without it the push methods answer -32003.
type Push struct {
	// Allow lists the exceptions to the SSRF guard (CIDR prefixes, IP
	// addresses or host names): the only way to reach a receiver on a
	// loopback, private, link-local, CGNAT or multicast address.
	Allow []string `json:"allow,omitempty"`
	// Timeout bounds one delivery attempt. Default: 10s.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// MaxAttempts bounds the attempts of one delivery (network errors,
	// 5xx and 429 are retried with exponential backoff and jitter).
	// Default: 5.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// MaxConfigs bounds the configs of one task. Default: 10.
	MaxConfigs int `json:"max_configs,omitempty"`
	// SigningKey is the file of a private key (JWK or PEM; EC P-256,
	// Ed25519 or RSA of at least 2048 bits): with it every delivery
	// carries a JWT signed with it, and the public key is served as a
	// JWKS at JWKSPath.
	SigningKey string `json:"signing_key,omitempty"`
	// JWKSPath is where the JWKS is served when SigningKey is set.
	// Default: /.well-known/jwks.json.
	JWKSPath string `json:"jwks_path,omitempty"`

	key *signing.Key
}

// DefaultJWKSPath is where a mount that signs serves its keys.
const DefaultJWKSPath = "/.well-known/jwks.json"

// PushSignatureExtension is the card extension that tells receivers
// deliveries are signed and where the keys are (its params).
const PushSignatureExtension = "https://github.com/caddy-a2a/caddy-a2a/extensions/push-signature/v1"

// provision reads the signing key (a file, so Provision, not Validate).
func (p *Push) provision() error {
	if p == nil || p.SigningKey == "" {
		return nil
	}
	if p.JWKSPath == "" {
		p.JWKSPath = DefaultJWKSPath
	}
	data, err := os.ReadFile(p.SigningKey)
	if err != nil {
		return fmt.Errorf("push: signing_key: %v", err)
	}
	if p.key, err = signing.Load(data); err != nil {
		return fmt.Errorf("push: %s: %v", p.SigningKey, err)
	}
	return nil
}

// sign sets a delivery's signature: Authorization: Bearer <JWT>, or
// A2A-Notification-Signature when the config's own credentials hold
// Authorization.
func (p *Push) sign(h http.Header, body []byte, task, url, iss string) error {
	sum := sha256.Sum256(body)
	c := signing.PushClaims{Issuer: iss, Audience: url, TaskID: task, BodySHA256: hex.EncodeToString(sum[:])}
	if iss != "" {
		// The JWKS is served on the mount's own base URL.
		c.JKU = iss + p.JWKSPath
	}
	tok, err := p.key.SignPush(c, time.Now())
	if err != nil {
		return err
	}
	if h.Get("Authorization") != "" {
		h.Set("A2A-Notification-Signature", tok)
	} else {
		h.Set("Authorization", "Bearer "+tok)
	}
	return nil
}

// cardExtension is the card's note that deliveries are signed: the
// algorithm, the JWKS path (on the card's own origin) and the header.
func (p *Push) cardExtension() (protocol.Extension, bool) {
	if p == nil || p.key == nil {
		return protocol.Extension{}, false
	}
	params, _ := json.Marshal(map[string]string{"jwks_path": p.JWKSPath, "alg": p.key.Algorithm(), "kid": p.key.KeyID()})
	return protocol.Extension{URI: PushSignatureExtension, Params: params,
		Description: "Push notifications are signed: a JWT in Authorization (Bearer), or in A2A-Notification-Signature when the config's own credentials use Authorization; its keys are the JWKS at jwks_path."}, true
}

// The bounds of the push settings: each a limit on what one config makes
// a process do.
const (
	maxPushAttempts = 20
	maxPushConfigs  = 100
	maxPushTimeout  = 5 * time.Minute
)

var pushKeys = []string{"allow", "timeout", "max_attempts", "max_configs", "signing_key", "jwks_path"}

// check refuses settings out of their bounds and allow entries that are
// not prefixes, addresses or host names.
func (p *Push) check() error {
	if p == nil {
		return nil
	}
	switch {
	case p.Timeout < 0 || time.Duration(p.Timeout) > maxPushTimeout:
		return fmt.Errorf("push: timeout must be between 0 and %s", maxPushTimeout)
	case p.MaxAttempts < 0 || p.MaxAttempts > maxPushAttempts:
		return fmt.Errorf("push: max_attempts must be between 1 and %d", maxPushAttempts)
	case p.MaxConfigs < 0 || p.MaxConfigs > maxPushConfigs:
		return fmt.Errorf("push: max_configs must be between 1 and %d", maxPushConfigs)
	}
	if _, err := push.NewGuard(p.Allow); err != nil {
		return err
	}
	if p.JWKSPath != "" {
		if p.SigningKey == "" {
			return errors.New("push: jwks_path without signing_key: there are no keys to serve")
		}
		if err := checkPath(p.JWKSPath); err != nil {
			return fmt.Errorf("push: jwks_path: %w", err)
		}
	}
	return nil
}

// options are the service's push options over the backend's dispatcher;
// nil without push.
func (p *Push) options(b *handler.Backend, issuer func(rpcURL string) string) (*handler.PushOptions, error) {
	if p == nil {
		return nil, nil
	}
	g, err := push.NewGuard(p.Allow)
	if err != nil {
		return nil, err
	}
	o := &handler.PushOptions{
		Dispatcher:  b.Dispatcher(),
		Guard:       g,
		Client:      push.NewClient(g),
		Timeout:     time.Duration(p.Timeout),
		MaxAttempts: p.MaxAttempts,
		MaxConfigs:  p.MaxConfigs,
		Issuer:      issuer,
		Handoff:     b.HandsOff(),
	}
	if p.key != nil {
		o.Sign = p.sign
	}
	return o, nil
}

// unmarshalPush parses `push { allow <entry>...; timeout <d>;
// max_attempts <n>; max_configs <n>; signing_key <file>; jwks_path
// <path> }`; the block may be left out.
func (h *Handler) unmarshalPush(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	p := &Push{}
	if err := subdirectives(d, "push", nil, func(key string) error {
		var err error
		switch key {
		case "allow":
			p.Allow, err = argsNoBlock(d, 1, -1)
		case "timeout":
			p.Timeout, err = durationArg(d)
		case "max_attempts":
			p.MaxAttempts, err = countArg(d)
		case "max_configs":
			p.MaxConfigs, err = countArg(d)
		case "signing_key":
			p.SigningKey, err = oneArg(d)
		case "jwks_path":
			p.JWKSPath, err = oneArg(d)
		default:
			return unknownSubdirective(d, "push", key, pushKeys)
		}
		return err
	}); err != nil {
		return err
	}
	h.Push = p
	return nil
}
