package push

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCheckAddrClasses(t *testing.T) {
	g, _ := NewGuard(nil)
	refused := map[string]string{
		"127.0.0.1":        "loopback",
		"127.255.0.9":      "loopback",
		"::1":              "loopback",
		"10.1.2.3":         "private",
		"172.16.0.1":       "private",
		"172.31.255.255":   "private",
		"192.168.1.1":      "private",
		"fd00::1":          "private",
		"169.254.169.254":  "link-local",
		"fe80::1":          "link-local",
		"100.64.0.1":       "CGNAT",
		"100.127.255.255":  "CGNAT",
		"0.0.0.0":          "this network",
		"0.1.2.3":          "this network",
		"::":               "unspecified",
		"224.0.0.1":        "multicast",
		"ff02::1":          "multicast",
		"255.255.255.255":  "broadcast",
		"::ffff:127.0.0.1": "loopback",
		"::ffff:10.0.0.1":  "private",
	}
	for addr, reason := range refused {
		err := g.CheckAddr(netip.MustParseAddr(addr))
		if err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: %v, want refused as %s", addr, err, reason)
		}
	}
	for _, addr := range []string{"8.8.8.8", "172.32.0.1", "100.128.0.1", "2001:4860::8888", "192.169.0.1"} {
		if err := g.CheckAddr(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("%s: refused: %v", addr, err)
		}
	}
}

func TestAllow(t *testing.T) {
	g, err := NewGuard([]string{"10.0.0.0/8", "127.0.0.1", "hooks.internal"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"10.9.9.9", "127.0.0.1", "::ffff:127.0.0.1"} {
		if err := g.CheckAddr(netip.MustParseAddr(a)); err != nil {
			t.Errorf("%s refused: %v", a, err)
		}
	}
	if g.CheckAddr(netip.MustParseAddr("127.0.0.2")) == nil {
		t.Error("127.0.0.2 allowed by an entry for 127.0.0.1")
	}
	if err := g.CheckURL(context.Background(), "https://hooks.internal/x"); err != nil {
		t.Errorf("allowed host refused: %v", err)
	}
	if _, err := NewGuard([]string{"http://x/"}); err == nil {
		t.Error("a URL accepted as an allow entry")
	}
}

func TestCheckURL(t *testing.T) {
	g, _ := NewGuard(nil)
	for raw, reason := range map[string]string{
		"ftp://example.com/":          "http or https",
		"https://user:pw@example.com": "user info",
		"https:///path":               "no host",
		"http://127.0.0.1:8080/":      "loopback",
		"http://[::1]/":               "loopback",
		"http://localhost/":           "localhost resolves to",
		"http://169.254.169.254/meta": "link-local",
		"http://[::ffff:10.0.0.1]/":   "private",
		"https://nowhere.invalid/":    "does not resolve",
	} {
		err := g.CheckURL(context.Background(), raw)
		var r *Refused
		if !errors.As(err, &r) || !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: %v, want refused (%s)", raw, err, reason)
		}
	}
	if err := g.CheckURL(context.Background(), "https://93.184.216.34/hook"); err != nil {
		t.Errorf("public address refused: %v", err)
	}
}

// The dial-time check: a URL that passed (or skipped) the create-time
// check still cannot connect to a blocked address.
func TestClientRefusesAtDial(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	g, _ := NewGuard(nil)
	_, err := NewClient(g).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("err = %v, want a loopback refusal", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the receiver was reached")
	}
	// localhost is a name: it resolves at dial time and the address is
	// checked.
	_, err = NewClient(g).Post(strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), "application/json", strings.NewReader("{}"))
	if err == nil || hits.Load() != 0 {
		t.Fatalf("localhost reached: %v", err)
	}
	g2, _ := NewGuard([]string{"127.0.0.1"})
	resp, err := NewClient(g2).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatal("the allowed receiver was not reached")
	}
}

// A redirect is not followed: an allowed receiver cannot send a delivery
// on to a blocked one.
func TestClientDoesNotFollowRedirects(t *testing.T) {
	var inner atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inner.Add(1) }))
	defer target.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer front.Close()
	g, _ := NewGuard([]string{"localhost"})
	resp, err := NewClient(g).Post(strings.Replace(front.URL, "127.0.0.1", "localhost", 1), "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || inner.Load() != 0 {
		t.Fatalf("status %d, inner hits %d: the redirect was followed", resp.StatusCode, inner.Load())
	}
}
