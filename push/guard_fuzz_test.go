package push

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"testing"
)

// FuzzCheckURL: with no allow list and no DNS (every name fails to
// resolve), the only webhook URLs the guard lets through name a public
// IP address literally, without a zone; and an address is judged the same
// with or without a zone.
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{
		"http://[::1%25lo]:8080/", "http://[::1%251]/", "https://[fd00::1%25eth0]/x", "http://[fe80::1%25eth0]:1/",
		"http://127.0.0.1/", "http://[::ffff:127.0.0.1]/", "https://8.8.8.8/hook", "https://[2001:4860::8888]/",
		"http://example.com/", "http://0x7f000001/", "http://user:pw@8.8.8.8/", "ftp://8.8.8.8/",
	} {
		f.Add(seed)
	}
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in this test")
	}}
	g, err := NewGuard(nil)
	if err != nil {
		f.Fatal(err)
	}
	g.Resolver = noDNS
	f.Fuzz(func(t *testing.T, raw string) {
		u, perr := url.Parse(raw)
		if perr == nil {
			if ip, err := netip.ParseAddr(u.Hostname()); err == nil && ip.Zone() != "" {
				if (g.CheckAddr(ip) == nil) != (g.CheckAddr(ip.WithZone("")) == nil) {
					t.Fatalf("%s is judged apart from %s", ip, ip.WithZone(""))
				}
			}
		}
		if g.CheckURL(context.Background(), raw) != nil {
			return
		}
		ip, err := netip.ParseAddr(u.Hostname())
		if err != nil || ip.Zone() != "" {
			t.Fatalf("%q passed with host %q: want a public IP literal without a zone", raw, u.Hostname())
		}
		ip = ip.Unmap()
		if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			t.Fatalf("%q passed with a non-public address %s", raw, ip)
		}
	})
}
