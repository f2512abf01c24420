package push

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// netip.Prefix.Contains is false for any address with a zone, so a zoned
// address must be checked without it: else every blocked range misses.
func TestCheckAddrZoned(t *testing.T) {
	g, _ := NewGuard(nil)
	for addr, reason := range map[string]string{
		"::1%lo":              "::1 is a loopback address",
		"::1%1":               "::1 is a loopback address",
		"fd00::1%eth0":        "fd00::1 is a private (unique local) address",
		"fe80::1%eth0":        "fe80::1 is a link-local address",
		"::ffff:127.0.0.1%lo": "127.0.0.1 is a loopback address",
	} {
		err := g.CheckAddr(netip.MustParseAddr(addr))
		if err == nil || !strings.HasPrefix(err.Error(), reason+" ") {
			t.Errorf("%s: %v, want refused: %s", addr, err, reason)
		}
	}
	// An allow entry still covers the address whatever its zone.
	a, _ := NewGuard([]string{"fe80::/10"})
	if err := a.CheckAddr(netip.MustParseAddr("fe80::1%eth0")); err != nil {
		t.Errorf("fe80::1%%eth0 refused under allow fe80::/10: %v", err)
	}
}

// A zone in a webhook URL names an interface of this machine: no
// receiver needs one, so it is refused outright, whatever the address.
func TestCheckURLRefusesZone(t *testing.T) {
	g, _ := NewGuard(nil)
	for _, raw := range []string{
		"http://[::1%25lo]:9/hook",
		"http://[::1%251]:9/hook",
		"http://[fd00::1%25eth0]/hook",
		"http://[fe80::1%25eth0]/hook",
		"https://[2001:4860::8888%25eth0]/hook",
	} {
		err := g.CheckURL(context.Background(), raw)
		var r *Refused
		if !errors.As(err, &r) || r.Reason != "the URL's host carries an IPv6 zone (%25…): a webhook may not name an interface" {
			t.Errorf("%s: %v, want refused for its zone", raw, err)
		}
	}
	// Not even an allowed prefix lets a zone through.
	a, _ := NewGuard([]string{"::1"})
	if err := a.CheckURL(context.Background(), "http://[::1%25lo]:9/"); err == nil {
		t.Error("a zoned URL passed under allow ::1")
	}
}

// The dial-time hook sees the zone too (a config stored before the
// set-time check refused zones, or a name that resolves to one): the
// loopback listener is never reached.
func TestDialRefusesZoned(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	lo := loopbackName(t)
	g, _ := NewGuard(nil)
	c := NewClient(g)
	c.Timeout = 5 * time.Second
	for _, host := range []string{"[::1%25" + lo + "]", "[::1%251]"} {
		_, err := c.Post("http://"+host+":"+port+"/hook", "application/json", strings.NewReader("{}"))
		if err == nil || !strings.Contains(err.Error(), "::1 is a loopback address") {
			t.Errorf("%s: %v, want a loopback refusal", host, err)
		}
	}
	for _, zone := range []string{lo, "1"} {
		_, err := g.DialContext(context.Background(), "tcp", "[::1%"+zone+"]:"+port)
		var r *Refused
		if !errors.As(err, &r) {
			t.Errorf("dial [::1%%%s]: %v, want refused", zone, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback listener was reached %d times", n)
	}
}

// loopbackName is the loopback interface's name ("lo" on Linux).
func loopbackName(t *testing.T) string {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name
		}
	}
	t.Skip("no loopback interface")
	return ""
}
