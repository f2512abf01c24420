package caddya2a

import (
	"fmt"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// The backend pool cannot tell two mounts of one config apart from a
// config and its reload (a reload provisions the new config before the
// old one lets go, so both hold a reference), so the mounts of each
// config load claim their sharing scope here. A config is known by the
// Done channel of its caddy.Context: Caddy makes one cancelable context
// per config load (caddy.go provisionContext), and every module of that
// config is provisioned with it or with a context.WithValue of it (the
// HTTP app adds its server), whose Done is the same channel.
var scopes = struct {
	sync.Mutex
	byConfig map[<-chan struct{}]map[string]*scopeClaim
}{byConfig: map[<-chan struct{}]map[string]*scopeClaim{}}

// scopeClaim is the hold of one config's mounts on one sharing scope.
type scopeClaim struct {
	key   string // the store key of the mounts: share name and store settings
	first string // the first mount, for messages
	n     int    // mounts holding it
}

// mountClaim is what a provisioned mount releases in Cleanup.
type mountClaim struct {
	config <-chan struct{}
	scope  string
}

// claimScope registers h (whose backend's pool key is key, its store's
// share share) in the sharing scope it uses within the config of ctx. It
// refuses a second mount of the same config in a scope that no share
// names (both would silently hold one task store and one owner
// namespace), and a mount that names a share another mount of the config
// uses with other store settings. It returns nil, nil when
// ctx belongs to no config load (a context that is never canceled), where
// there is nothing to compare with.
func (h *Handler) claimScope(ctx caddy.Context, key, share string) (*mountClaim, error) {
	config := ctx.Done()
	if config == nil {
		return nil, nil
	}
	scope := key
	if share != "" {
		scope = "share " + share
	}
	desc := h.describeMount(ctx)

	scopes.Lock()
	defer scopes.Unlock()
	claims := scopes.byConfig[config]
	if claims == nil {
		claims = map[string]*scopeClaim{}
		scopes.byConfig[config] = claims
	}
	c := claims[scope]
	switch {
	case c == nil:
		claims[scope] = &scopeClaim{key: key, first: desc, n: 1}
	case share == "":
		return nil, fmt.Errorf("%s and %s would share one task store and one owner namespace (the same upstream %s, "+
			"rpc_path and store settings), so a user of one could reach the other's tasks; set `share <name>` in "+
			"the store block of both: the same name to share their tasks, different names to keep them apart",
			desc, c.first, h.upstream.Target())
	case c.key != key:
		return nil, fmt.Errorf("share %q: %s and %s use it with different store settings (the store block, or the limits the store enforces: max_tasks_per_owner, max_run_events); mounts sharing a store "+
			"must configure it alike (or use different share names)", share, desc, c.first)
	default:
		c.n++
	}
	return &mountClaim{config: config, scope: scope}, nil
}

// release drops the claim (nil: no claim).
func (m *mountClaim) release() {
	if m == nil {
		return
	}
	scopes.Lock()
	defer scopes.Unlock()
	claims := scopes.byConfig[m.config]
	if c := claims[m.scope]; c != nil {
		if c.n--; c.n <= 0 {
			delete(claims, m.scope)
		}
	}
	if len(claims) == 0 {
		delete(scopes.byConfig, m.config)
	}
}

// describeMount names h for an operator: a handler cannot see its site's
// address, but it knows its HTTP server (its name and listen addresses),
// its card name, RPC path and upstream.
func (h *Handler) describeMount(ctx caddy.Context) string {
	where := "outside any HTTP server"
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil {
		where = "in server " + srv.Name()
		if len(srv.Listen) > 0 {
			where += " (" + strings.Join(srv.Listen, " ") + ")"
		}
	}
	return fmt.Sprintf("the a2a mount %q %s at rpc_path %s", h.Name, where, h.RPCPath)
}
