package caddya2a

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/push"
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
}

// The bounds of the push settings: each a limit on what one config makes
// a process do.
const (
	maxPushAttempts = 20
	maxPushConfigs  = 100
	maxPushTimeout  = 5 * time.Minute
)

var pushKeys = []string{"allow", "timeout", "max_attempts", "max_configs"}

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
		return errors.New(err.Error())
	}
	return nil
}

// options are the service's push options over the backend's dispatcher;
// nil without push.
func (p *Push) options(b *Backend) (*handler.PushOptions, error) {
	if p == nil {
		return nil, nil
	}
	g, err := push.NewGuard(p.Allow)
	if err != nil {
		return nil, err
	}
	return &handler.PushOptions{
		Dispatcher:  b.dispatcher(),
		Guard:       g,
		Client:      push.NewClient(g),
		Timeout:     time.Duration(p.Timeout),
		MaxAttempts: p.MaxAttempts,
		MaxConfigs:  p.MaxConfigs,
	}, nil
}

// unmarshalPush parses `push { allow <entry>...; timeout <d>;
// max_attempts <n>; max_configs <n> }`; the block may be left out.
func (h *Handler) unmarshalPush(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	p := &Push{}
	if err := subdirectives(d, "push", nil, func(key string) error {
		var err error
		switch key {
		case "allow":
			var more []string
			more, err = argsNoBlock(d, 1, -1)
			p.Allow = append(p.Allow, more...)
		case "timeout":
			p.Timeout, err = durationArg(d)
		case "max_attempts":
			p.MaxAttempts, err = countArg(d)
		case "max_configs":
			p.MaxConfigs, err = countArg(d)
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

// pushState is a backend's dispatcher, made when a config with push
// first uses the backend: it delivers for every config sharing the
// store, across reloads, and ends with the store.
type pushState struct {
	once sync.Once
	d    *push.Dispatcher
}

func (b *Backend) dispatcher() *push.Dispatcher {
	b.push.once.Do(func() {
		b.push.d = push.New(push.Options{Logger: zap.New(&liveCore{cur: b.log})})
	})
	return b.push.d
}

// closePush drops what the dispatcher still holds, saying how many
// notifications that was.
func (b *Backend) closePush() {
	if b.push.d == nil {
		return
	}
	if n := b.push.d.Close(); n > 0 {
		b.log.Load().Warn("a2a: push notifications not delivered: the store they belong to was closed", zap.Int("notifications", n))
	}
}
