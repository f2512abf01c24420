package caddya2a

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-a2a/caddy-a2a/binding/grpcbind"
)

// routeLists holds, per config load, HTTP server and route list, the
// paths each provisioned mount answers. A mount answers its paths and
// passes the rest on, so of two mounts of one route list (a site's
// directives, or one handle block's) that claim one path, the second never
// answers it; both pass `caddy validate` unless a Provision compares them.
// A handler cannot see its site's address, but its ancestry names the
// module holding its route list (a site's subroute, or the HTTP app for a
// server's own routes): mounts of other sites, or of other handle blocks,
// are not compared; nor are mounts whose own routes have different
// matchers (`a2a @host1 {…}` and `a2a @host2 {…}`). Keyed as scopes is, by the
// config load's Done channel; Cleanup releases.
var routeLists = struct {
	sync.Mutex
	byList map[routeListKey][]*pathClaim
}{byList: map[routeListKey][]*pathClaim{}}

// routeListKey names one route list of one server of one config load.
type routeListKey struct {
	config <-chan struct{}
	server string
	// holder is the module holding the route list (nil: unknown, or a
	// module value no map key can hold).
	holder any
}

// pathClaim is what one mount answers within its route list.
type pathClaim struct {
	key   routeListKey
	mount string // describeMount's
	paths []claimedPath
	// matchers are those of the mount's own route (a matcher on the a2a
	// line: `a2a @host1 {…}`), nil for none or unknown. Mounts whose
	// routes match differently may both answer a path; mounts with the
	// same matchers (none, most often) cannot.
	matchers caddyhttp.MatcherSets
}

// claimedPath is one path a mount answers (prefix: every path that
// starts with it) and the setting that makes it answer there.
type claimedPath struct {
	path    string
	prefix  bool
	setting string
}

// String writes p for an operator.
func (p claimedPath) String() string {
	if p.prefix {
		return "the paths under " + p.path
	}
	return p.path
}

// claimedPaths are the paths h answers, as ServeHTTP tells them apart:
// card_path; rpc_path in both its forms; everything under rest_path; the
// inspector page; the gRPC services. The JWKS path is left out: mounts
// that sign share its default, and the first one's key set is served.
func (h *Handler) claimedPaths() []claimedPath {
	ps := []claimedPath{{path: h.CardPath, setting: "card_path"}, {path: h.RPCPath, setting: "rpc_path"}}
	switch rp := h.RPCPath; {
	case rp == "/":
	case strings.HasSuffix(rp, "/"):
		ps = append(ps, claimedPath{path: strings.TrimSuffix(rp, "/"), setting: "rpc_path"})
	default:
		ps = append(ps, claimedPath{path: rp + "/", setting: "rpc_path"})
	}
	if h.RESTPath != "" {
		ps = append(ps, claimedPath{path: strings.TrimSuffix(h.RESTPath, "/") + "/", prefix: true, setting: "rest_path"})
	}
	if h.Inspector != nil {
		ps = append(ps, claimedPath{path: h.Inspector.Path, setting: "inspector"})
	}
	if h.GRPC {
		for _, sp := range []string{grpcbind.ServicePath, grpcbind.ServicePathV03} {
			ps = append(ps, claimedPath{path: sp, prefix: true, setting: "grpc"})
		}
	}
	return ps
}

// overlap returns the path both a and b answer, "" for none.
func overlap(a, b claimedPath) string {
	switch {
	case !a.prefix && !b.prefix:
		if a.path == b.path {
			return a.String()
		}
	case a.prefix && b.prefix:
		if strings.HasPrefix(a.path, b.path) {
			return a.String()
		}
		if strings.HasPrefix(b.path, a.path) {
			return b.String()
		}
	case a.prefix:
		if strings.HasPrefix(b.path, a.path) {
			return b.String()
		}
	default:
		if strings.HasPrefix(a.path, b.path) {
			return a.String()
		}
	}
	return ""
}

// claimPaths registers the paths of h in its route list, refusing a
// mount one of whose paths a mount before it in the list already
// answers. It returns nil, nil outside any config load or HTTP server.
func (h *Handler) claimPaths(ctx caddy.Context) (*pathClaim, error) {
	config := ctx.Done()
	srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if config == nil || !ok || srv == nil {
		return nil, nil
	}
	key := routeListKey{config: config, server: srv.Name()}
	if mods := ctx.Modules(); len(mods) >= 2 {
		// mods ends with h itself; before it, its route list's holder.
		if holder := mods[len(mods)-2]; reflect.TypeOf(holder).Comparable() {
			key.holder = holder
		}
	}
	c := &pathClaim{key: key, mount: h.describeMount(ctx), paths: h.claimedPaths(), matchers: ownMatchers(key.holder, srv)}

	routeLists.Lock()
	defer routeLists.Unlock()
	for _, first := range routeLists.byList[key] {
		// reflect.DeepEqual of provisioned matchers: equal for the
		// same path, host, header… sets. Matchers it cannot tell
		// equal (a func inside an expression's program) leave the
		// mounts uncompared, as mounts in different handle blocks are.
		if !reflect.DeepEqual(first.matchers, c.matchers) {
			continue
		}
		for _, fp := range first.paths {
			for _, p := range c.paths {
				if at := overlap(fp, p); at != "" {
					return nil, fmt.Errorf("%s would never answer %s (its %s): %s, before it in the same site, answers there (its %s); "+
						"give each mount of a site its own card_path, rpc_path, rest_path, inspector path and at most one of them grpc, "+
						"or keep them apart with a different matcher on each a2a line (a2a @name {…}) or a handle block each",
						c.mount, at, p.setting, first.mount, fp.setting)
				}
			}
		}
	}
	routeLists.byList[key] = append(routeLists.byList[key], c)
	return c, nil
}

// ownMatchers returns the matchers of the route being provisioned in the
// route list holder keeps (a subroute's, or srv's own routes and error
// routes). Caddy provisions a list's handlers route by route and clears
// each route's HandlersRaw once its handlers are loaded, after its
// matchers: the first route still holding HandlersRaw is the one whose
// handler (this mount) is being provisioned. nil when none is found.
func ownMatchers(holder any, srv *caddyhttp.Server) caddyhttp.MatcherSets {
	var lists []caddyhttp.RouteList
	switch h := holder.(type) {
	case *caddyhttp.Subroute:
		lists = append(lists, h.Routes)
	case *caddyhttp.App:
		lists = append(lists, srv.Routes)
		if srv.Errors != nil {
			lists = append(lists, srv.Errors.Routes)
		}
	}
	for _, list := range lists {
		for i := range list {
			if list[i].HandlersRaw != nil {
				return list[i].MatcherSets
			}
		}
	}
	return nil
}

// release drops the claim (nil: no claim).
func (c *pathClaim) release() {
	if c == nil {
		return
	}
	routeLists.Lock()
	defer routeLists.Unlock()
	list := routeLists.byList[c.key]
	for i, o := range list {
		if o == c {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(routeLists.byList, c.key)
	} else {
		routeLists.byList[c.key] = list
	}
}
