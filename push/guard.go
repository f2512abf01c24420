// Package push delivers A2A push notifications: the SSRF guard every
// webhook URL passes (when a config is created and again at every dial),
// the HTTP client that goes through it, and the dispatcher that delivers
// each task's notifications in order, on a bounded number of goroutines,
// with retries.
package push

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// blocked are the address ranges no webhook may reach unless an allow
// entry names them: loopback, RFC 1918 and ULA private, link-local,
// CGNAT, "this network", unspecified, multicast and broadcast. IPv4-mapped
// IPv6 addresses are unmapped before the check.
var blocked = func() []struct {
	p      netip.Prefix
	reason string
} {
	list := []struct{ cidr, reason string }{
		{"127.0.0.0/8", "loopback"},
		{"::1/128", "loopback"},
		{"10.0.0.0/8", "private"},
		{"172.16.0.0/12", "private"},
		{"192.168.0.0/16", "private"},
		{"fc00::/7", "private (unique local)"},
		{"169.254.0.0/16", "link-local"},
		{"fe80::/10", "link-local"},
		{"100.64.0.0/10", "shared address space (CGNAT)"},
		{"0.0.0.0/8", "\"this network\" (0.0.0.0/8)"},
		{"::/128", "unspecified"},
		{"224.0.0.0/4", "multicast"},
		{"ff00::/8", "multicast"},
		{"255.255.255.255/32", "broadcast"},
	}
	out := make([]struct {
		p      netip.Prefix
		reason string
	}, len(list))
	for i, b := range list {
		out[i].p, out[i].reason = netip.MustParsePrefix(b.cidr), b.reason
	}
	return out
}()

// Guard decides which webhook addresses may be reached.
type Guard struct {
	nets  []netip.Prefix
	hosts map[string]struct{}
	// Resolver looks up host names at create time; nil is net.DefaultResolver.
	Resolver *net.Resolver
	// LookupTimeout bounds a create-time lookup (default 2s).
	LookupTimeout time.Duration
}

// NewGuard returns a guard with the allow entries given: CIDR prefixes,
// IP addresses, or host names (a URL with that host is reached whatever
// it resolves to).
func NewGuard(allow []string) (*Guard, error) {
	g := &Guard{hosts: map[string]struct{}{}}
	for _, a := range allow {
		if p, err := netip.ParsePrefix(a); err == nil {
			g.nets = append(g.nets, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(a); err == nil {
			g.nets = append(g.nets, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		h := strings.ToLower(strings.TrimSuffix(a, "."))
		if h == "" || strings.ContainsAny(h, "/:@ ") {
			return nil, fmt.Errorf("push: allow %q is neither a CIDR prefix, an IP address nor a host name", a)
		}
		g.hosts[h] = struct{}{}
	}
	return g, nil
}

// Refused is an address or URL the guard refuses, with the reason.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return r.Reason }

// CheckAddr returns why ip may not be reached, or nil. A zone does not
// change where an address leads, so it is checked without one.
func (g *Guard) CheckAddr(ip netip.Addr) error {
	// netip.Prefix.Contains is false for every zoned address: with the
	// zone kept, [::1%lo] would miss every blocked range.
	ip = ip.WithZone("").Unmap()
	for _, p := range g.nets {
		if p.Contains(ip) {
			return nil
		}
	}
	for _, b := range blocked {
		if b.p.Contains(ip) {
			return &Refused{Reason: ip.String() + " is a " + b.reason + " address (push allow lists the exceptions)"}
		}
	}
	return nil
}

// CheckURL returns why raw may not be a webhook URL, or nil: it must be
// an absolute http or https URL without user info, whose host is allowed
// or resolves only to addresses the guard lets through.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return &Refused{Reason: "the URL does not parse"}
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return &Refused{Reason: "the URL must be http or https"}
	}
	if u.User != nil {
		return &Refused{Reason: "the URL must not carry user info (use authentication)"}
	}
	host := u.Hostname()
	if host == "" {
		return &Refused{Reason: "the URL has no host"}
	}
	if strings.Contains(host, "%") {
		// A zone names an interface of this machine; no receiver
		// elsewhere needs one.
		return &Refused{Reason: "the URL's host carries an IPv6 zone (%25…): a webhook may not name an interface"}
	}
	if g.hostAllowed(host) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.CheckAddr(ip)
	}
	timeout := g.LookupTimeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return &Refused{Reason: "the host " + host + " does not resolve"}
	}
	for _, ip := range ips {
		if err := g.CheckAddr(ip); err != nil {
			return &Refused{Reason: "the host " + host + " resolves to " + err.Error()}
		}
	}
	return nil
}

func (g *Guard) hostAllowed(host string) bool {
	_, ok := g.hosts[strings.ToLower(strings.TrimSuffix(host, "."))]
	return ok
}

// DialContext dials addr (host:port) as an http.Transport does, checking
// the address actually connected to (after resolution, so a host that
// resolves to a blocked address at dial time — DNS rebinding — is
// refused as well), unless the host is an allowed name.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !g.hostAllowed(host) {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return errors.New("push: unparsable dial address " + address)
			}
			return g.CheckAddr(ap.Addr())
		}
	}
	return d.DialContext(ctx, network, addr)
}
