// Package inspector serves the built-in inspector page: one HTML page,
// its script and its style sheet, embedded in the binary, that shows an
// A2A endpoint's card (both versions, with the problems the card check
// finds), chats with the agent (streamed chunks and status changes as
// they arrive, input-required turns continued in place, file parts
// attached and downloaded), lists the caller's tasks with cancel and
// resubscribe, and shows every raw frame. The page talks only to its own
// origin, over the endpoint's JSON-RPC 1.0, so the site's auth applies to
// it as to any caller. It never imports Caddy.
package inspector

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/cli"
)

//go:embed page.html inspector.js inspector.css
var assets embed.FS

// The asset names under the page's path.
const (
	scriptName   = "/inspector.js"
	styleName    = "/inspector.css"
	problemsName = "/problems"
)

// securityHeaders go on every answer: scripts, styles and connections
// from the page's own origin only, no inline script, no framing, and
// nothing cached (the page's data is the caller's own).
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
		"img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"Cache-Control":          "no-store",
	"X-Frame-Options":        "DENY",
}

// Config says where the page is and what it talks to.
type Config struct {
	// Path is the page's path, as the handler sees it; its assets are
	// under it (Path + "/inspector.js").
	Path string
	// CardPath and RPCPath are the endpoint's, as the handler sees them.
	CardPath, RPCPath string
	// Prefix is the path prefix a handler in front removed from r (a
	// handle_path), put back in the URLs the page uses; nil: none.
	Prefix func(r *http.Request) string
	// Cards renders the endpoint's card documents for r, the hybrid one
	// (what 0.3 clients read) and the 1.0 one, for the problems list.
	Cards func(r *http.Request) (hybrid, v10 []byte, err error)
}

// Inspector serves the page of one endpoint.
type Inspector struct {
	cfg           Config
	page          *template.Template
	script, style []byte
	scriptLen     string
	styleLen      string
}

// New makes the inspector of cfg.
func New(cfg Config) (*Inspector, error) {
	page, err := template.ParseFS(assets, "page.html")
	if err != nil {
		return nil, err
	}
	script, err := assets.ReadFile("inspector.js")
	if err != nil {
		return nil, err
	}
	style, err := assets.ReadFile("inspector.css")
	if err != nil {
		return nil, err
	}
	return &Inspector{cfg: cfg, page: page, script: script, style: style,
		scriptLen: strconv.Itoa(len(script)), styleLen: strconv.Itoa(len(style))}, nil
}

// Owns says whether path is the page's or one of its assets'.
func (in *Inspector) Owns(path string) bool {
	switch path {
	case in.cfg.Path, in.cfg.Path + scriptName, in.cfg.Path + styleName, in.cfg.Path + problemsName:
		return true
	}
	return false
}

// pageData is what the page template fills in: the URLs the script
// reads from the page's meta elements (no inline script).
type pageData struct {
	Card, RPC, Problems, Script, Style string
}

// ServeHTTP answers GET and HEAD on a path Owns reports.
func (in *Inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range securityHeaders {
		h.Set(k, v)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "a2a: the inspector answers GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	prefix := ""
	if in.cfg.Prefix != nil {
		prefix = in.cfg.Prefix(r)
	}
	switch r.URL.Path {
	case in.cfg.Path + scriptName:
		in.asset(w, r, "text/javascript; charset=utf-8", in.script, in.scriptLen)
	case in.cfg.Path + styleName:
		in.asset(w, r, "text/css; charset=utf-8", in.style, in.styleLen)
	case in.cfg.Path + problemsName:
		in.problems(w, r)
	default:
		base := prefix + in.cfg.Path
		var b bytes.Buffer
		if err := in.page.Execute(&b, pageData{Card: prefix + in.cfg.CardPath, RPC: prefix + in.cfg.RPCPath,
			Problems: base + problemsName, Script: base + scriptName, Style: base + styleName}); err != nil {
			http.Error(w, "a2a: the inspector page could not be rendered", http.StatusInternalServerError)
			return
		}
		in.asset(w, r, "text/html; charset=utf-8", b.Bytes(), strconv.Itoa(b.Len()))
	}
}

func (in *Inspector) asset(w http.ResponseWriter, r *http.Request, ctype string, body []byte, length string) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", length)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// problemsDoc is the answer of Path + "/problems": what the card check
// finds in each card document, as `caddy a2a card` lists it.
type problemsDoc struct {
	Hybrid []string `json:"hybrid"`
	V10    []string `json:"v10"`
}

func (in *Inspector) problems(w http.ResponseWriter, r *http.Request) {
	hybrid, v10, err := in.cfg.Cards(r)
	if err != nil {
		http.Error(w, "a2a: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	doc := problemsDoc{Hybrid: orEmpty(cli.CheckCard(hybrid)), V10: orEmpty(cli.CheckCard(v10))}
	body, _ := json.Marshal(doc)
	in.asset(w, r, "application/json", body, strconv.Itoa(len(body)))
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
