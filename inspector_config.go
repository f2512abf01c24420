package caddya2a

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/inspector"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Inspector serves the built-in inspector page: the card, a chat with the
// agent, the caller's tasks and the raw frames, for a person in a browser.
// It calls the mount's own JSON-RPC endpoint (A2A 1.0) from the page's
// origin, so the site's auth covers it like any caller.
type Inspector struct {
	// Path is where the page is served (its script and style sheet under
	// it). Default: rpc_path + "/inspector" ("/inspector" when rpc_path
	// is "/").
	Path string `json:"path,omitempty"`
}

// fill sets the default path.
func (in *Inspector) fill(rpcPath string) {
	if in == nil || in.Path != "" {
		return
	}
	in.Path = strings.TrimSuffix(rpcPath, "/") + "/inspector"
}

// checkInspector holds the inspector's path to the paths the mount
// already answers, and asks for the version the page speaks.
func (h *Handler) checkInspector() error {
	in := h.Inspector
	if in == nil {
		return nil
	}
	if err := checkPath(in.Path); err != nil {
		return fmt.Errorf("inspector: %w", err)
	}
	for _, p := range []struct{ name, path string }{{"card_path", h.CardPath}, {"rpc_path", h.RPCPath}} {
		if in.Path == p.path {
			return fmt.Errorf("inspector: %s is %s's path too", in.Path, p.name)
		}
	}
	if h.RESTPath != "" {
		if base := strings.TrimSuffix(h.RESTPath, "/"); strings.HasPrefix(in.Path, base+"/") {
			return fmt.Errorf("inspector: %s is under rest_path %s, whose routes would answer it", in.Path, h.RESTPath)
		}
	}
	if !slices.Contains(h.versions, protocol.V10) {
		return errors.New("inspector: the page speaks A2A 1.0: add 1.0 to spec_version")
	}
	return nil
}

// provisionInspector makes the page of this mount, or none.
func (h *Handler) provisionInspector() error {
	h.inspector = nil
	if h.Inspector == nil {
		return nil
	}
	if h.Inspector.Path == h.jwksPath {
		return fmt.Errorf("inspector: %s is the JWKS path too", h.jwksPath)
	}
	in, err := inspector.New(inspector.Config{
		Path: h.Inspector.Path, CardPath: h.CardPath, RPCPath: h.RPCPath,
		Prefix: strippedPrefix, Cards: h.cardDocuments,
	})
	if err != nil {
		return fmt.Errorf("inspector: %w", err)
	}
	h.inspector = in
	return nil
}

// cardDocuments are the card's hybrid and 1.0 documents as a card request
// r would get them.
func (h *Handler) cardDocuments(r *http.Request) (hybrid, v10 []byte, err error) {
	u, err := h.rpcURL(r)
	if err != nil {
		return nil, nil, err
	}
	urls := httpbind.CardURLs{RPC: u, REST: h.restURL(u), GRPC: h.grpcAddr(u)}
	if hybrid, err = h.cards.Document(urls, false); err != nil {
		return nil, nil, err
	}
	if v10, err = h.cards.Document(urls, true); err != nil {
		return nil, nil, err
	}
	return hybrid, v10, nil
}
