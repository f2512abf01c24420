package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// maxCard bounds the card document read.
const maxCard = 4 << 20

// fetched is an agent's card as read from the server.
type fetched struct {
	// URL is where the card was found.
	URL string
	// Raw is the document as sent.
	Raw []byte
	// Card is a2a-go's reading of it (either version, or the hybrid
	// document); nil when it could not be read, ParseErr then says why.
	Card     *a2a.AgentCard
	ParseErr error
}

// cardURLs are the places to look for the card of what the user named:
// a URL of a .json document is the card itself; any other is a base
// under which, and then at whose origin, the well-known path is tried
// (so the RPC URL a user copied finds its server's card too).
func cardURLs(given string) ([]string, error) {
	u, err := url.Parse(given)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL", given)
	}
	if strings.HasSuffix(u.Path, ".json") {
		return []string{u.String()}, nil
	}
	u.RawQuery, u.Fragment = "", ""
	base := strings.TrimSuffix(u.Path, "/")
	out := []string{u.Scheme + "://" + u.Host + base + protocol.WellKnownCardPath}
	if base != "" {
		out = append(out, u.Scheme+"://"+u.Host+protocol.WellKnownCardPath)
	}
	return out, nil
}

// fetchCard reads the card of the server at given. It fails only when
// no card document could be fetched; a document a2a-go cannot read is
// returned with ParseErr set, for the card check to report.
func fetchCard(ctx context.Context, w *wire, given string) (*fetched, error) {
	urls, err := cardURLs(given)
	if err != nil {
		return nil, err
	}
	var tried []string
	for _, u := range urls {
		raw, status, err := getCard(ctx, w, u)
		if err != nil {
			return nil, fmt.Errorf("fetching the card at %s: %w", u, err)
		}
		last := len(tried) == len(urls)-1
		// A miss under a base URL (a 404, or a server's empty 200 for a
		// path it has no route for) sends us on to the origin's card.
		if !last && (status == http.StatusNotFound || (status == http.StatusOK && !jsonwire.IsObject(raw))) {
			tried = append(tried, u)
			continue
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("fetching the card at %s: HTTP %d %s", u, status, http.StatusText(status))
		}
		if !jsonwire.IsObject(raw) {
			return nil, fmt.Errorf("fetching the card at %s: the answer is not a JSON object", u)
		}
		f := &fetched{URL: u, Raw: raw}
		f.Card, f.ParseErr = readCard(raw)
		return f, nil
	}
	return nil, fmt.Errorf("no agent card at %s", strings.Join(tried, " or "))
}

func getCard(ctx context.Context, w *wire, u string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	w.setHeader(req)
	req.Header.Set("Accept", "application/json")
	resp, err := w.client().Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxCard+1))
	if err != nil {
		return nil, 0, err
	}
	if len(raw) > maxCard {
		return nil, 0, fmt.Errorf("the card is over %d MiB", maxCard>>20)
	}
	return raw, resp.StatusCode, nil
}

// readCard is a2a-go's reading of a card of either version. A 0.3
// card's url without preferredTransport is JSON-RPC, as the 0.3 schema
// defaults it (a2a-go leaves that interface out). 1.0's
// securityRequirements are handed to a2a-go in the form it reads
// (bareScopes).
func readCard(raw []byte) (*a2a.AgentCard, error) {
	card, err := a2av0.NewAgentCardParser()(bareScopes(raw))
	if err != nil {
		return nil, err
	}
	if len(card.SupportedInterfaces) == 0 {
		var v03 struct {
			URL             string `json:"url"`
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(raw, &v03) == nil && v03.URL != "" {
			v := v03.ProtocolVersion
			if v == "" {
				v = string(a2av0.Version)
			}
			card.SupportedInterfaces = []*a2a.AgentInterface{{URL: v03.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.ProtocolVersion(v)}}
		}
	}
	return card, nil
}

// sameVersion says whether an interface's protocolVersion ("0.3",
// "0.3.0", "1.0.1") is the version asked for ("0.3", "1.0").
func sameVersion(have a2a.ProtocolVersion, want string) bool {
	return string(have) == want || strings.HasPrefix(string(have), want+".")
}

// connect fetches the card at given and makes a2a-go's client for it,
// over the interfaces of Options.Version when set (JSON-RPC preferred
// over HTTP+JSON, the newest version first).
func connect(ctx context.Context, o *Options, w *wire, given string) (*a2aclient.Client, error) {
	if err := o.checkVersion(); err != nil {
		return nil, err
	}
	f, err := fetchCard(ctx, w, given)
	if err != nil {
		return nil, err
	}
	if f.Card == nil {
		return nil, fmt.Errorf("the card at %s cannot be read: %v", f.URL, f.ParseErr)
	}
	card := *f.Card
	if o.Version != "" {
		var keep []*a2a.AgentInterface
		for _, in := range card.SupportedInterfaces {
			if sameVersion(in.ProtocolVersion, o.Version) {
				keep = append(keep, in)
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("the card at %s offers no %s interface (it offers %s)", f.URL, o.Version, describeInterfaces(card.SupportedInterfaces))
		}
		card.SupportedInterfaces = keep
	}
	if len(o.Header) > 0 {
		ifs, err := credentialed(o, f.URL, card.SupportedInterfaces)
		if err != nil {
			return nil, err
		}
		card.SupportedInterfaces = ifs
	}
	c, err := a2aclient.NewFromCard(ctx, &card, clientOptions(w)...)
	if err != nil {
		return nil, fmt.Errorf("the card at %s: %w", f.URL, err)
	}
	return c, nil
}

// dial is connect with the command's own wire, which prints every
// response frame from here on when Options.JSON is set (the card's GET,
// before, is not a call).
func dial(ctx context.Context, o *Options, given string) (*a2aclient.Client, *wire, error) {
	w := newWire(o)
	c, err := connect(ctx, o, w, given)
	if err != nil {
		return nil, nil, err
	}
	if o.JSON {
		w.onFrame = o.raw
	}
	return c, w, nil
}

// clientOptions are a2a-go's transports for both versions and both HTTP
// bindings, all over w's client, and w's headers on every call.
func clientOptions(w *wire) []a2aclient.FactoryOption {
	hc := w.client()
	return []a2aclient.FactoryOption{
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON}}),
		a2aclient.WithCallInterceptors(credentials(w.header)),
		a2aclient.WithJSONRPCTransport(hc),
		a2aclient.WithRESTTransport(hc),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}),
		a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: hc}),
	}
}

// credentialed are the interfaces the command's credentials may go to
// (Options.mayCredential): a card names any URL it likes, and a
// password for the card's server is not one for another's. None: an
// error naming the other origins and the flag that trusts one.
func credentialed(o *Options, cardURL string, ifs []*a2a.AgentInterface) ([]*a2a.AgentInterface, error) {
	var keep []*a2a.AgentInterface
	var others []string
	for _, in := range ifs {
		if o.mayCredential(cardURL, in.URL) {
			keep = append(keep, in)
		} else if or := originOf(in.URL); !slices.Contains(others, or) {
			others = append(others, or)
		}
	}
	if len(keep) == 0 && len(others) > 0 {
		return nil, fmt.Errorf("the card at %s names interfaces only at another origin (%s): credentials (--user, -H) go there only if you trust it with --trust-origin %s",
			cardURL, strings.Join(others, ", "), others[0])
	}
	return keep, nil
}

func describeInterfaces(ifs []*a2a.AgentInterface) string {
	if len(ifs) == 0 {
		return "none"
	}
	var b []string
	for _, in := range ifs {
		b = append(b, string(in.ProtocolBinding)+" "+string(in.ProtocolVersion))
	}
	return strings.Join(b, ", ")
}
