package httpbind

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// maxCachedCardURLs caps the per-URL card cache. The RPC URL may come from
// the request's Host header, which any client controls: past the cap a
// card is rendered per request instead of growing the map.
const maxCachedCardURLs = 64

// Header values shared by every card answer.
var (
	varyVersion  = []string{VersionHeader}
	allowGetHead = []string{"GET, HEAD"}
	noStore      = []string{"no-store"}
)

// cardDoc is one rendered card document with its precomputed headers, so
// that a cache hit writes headers without allocating.
type cardDoc struct {
	body   []byte
	etag   string
	etagH  []string
	length []string
}

// cardDocs holds the two variants served for one RPC URL.
type cardDocs [2]*cardDoc

// Index of each variant in cardDocs.
const (
	docHybrid = 0
	docV10    = 1
)

// cardServerState is the CardServer's data.
type cardServerState struct {
	versions     []protocol.Version
	maxAge       string // seconds
	cacheControl []string
	// set is the card served and its rendered documents; nil while there
	// is none yet (a gateway whose agent has not answered).
	set atomic.Pointer[cardSet]
	// sign, if set, signs each rendered document (SignWith).
	sign func(doc []byte, urls CardURLs) ([]byte, error)
}

// cardSet is one card with the documents rendered of it, per pair of
// URLs.
type cardSet struct {
	card protocol.AgentCard
	// modified is the card's Last-Modified date, and lastModified that
	// header: the second after this card began to be served. An HTTP date
	// has one-second precision, so a date rounded down could name a card
	// that changed (a reload, a gateway's new card) later in that same
	// second, and If-Modified-Since would then keep a client on the old
	// card. Rounded up, a card that began later always has a later date;
	// the header is sent from that second on (a date in the future is
	// none), and ETag serves the caches meanwhile.
	modified     time.Time
	lastModified []string
	mu           sync.RWMutex
	cache        map[CardURLs]*cardDocs
}

// CardURLs are the addresses of a card's interfaces.
type CardURLs struct {
	// RPC is the JSON-RPC URL, of every version served.
	RPC string
	// REST is the HTTP+JSON base URL (A2A 1.0, and 0.3 under its /v1);
	// "" for none.
	REST string
	// GRPC is the gRPC host:port (either version's service); "" for none.
	GRPC string
}

func newCardSet(card protocol.AgentCard) *cardSet {
	mod := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	return &cardSet{card: card, modified: mod, lastModified: []string{mod.Format(http.TimeFormat)},
		cache: make(map[CardURLs]*cardDocs)}
}

// notModified reports whether a GET or HEAD of doc, last modified at
// modified, is answered 304 at now, by RFC 9110 §13.2.2's order:
// If-None-Match when the request has one, else If-Modified-Since (a date
// at or after modified; one that does not parse, or is later than now, is
// ignored, as §13.1.3 says).
func notModified(r *http.Request, doc *cardDoc, modified, now time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		return etagListMatches(inm, doc.etag)
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" {
		return false
	}
	t, err := http.ParseTime(ims)
	return err == nil && !modified.After(t) && !t.After(now)
}

// CardServer answers GET/HEAD for the Agent Card with the variant the
// A2A-Version header selects, a strong ETag per variant, Last-Modified
// (when the card began to be served), Vary: A2A-Version, Cache-Control:
// public, max-age and 304 on If-None-Match or If-Modified-Since. Rendered
// documents are cached per RPC URL.
type CardServer struct {
	s cardServerState
}

// NewCardServer returns a card server for card (Interfaces are filled per
// request from the RPC URL and the served versions). A nil card is one not
// known yet: the server answers 503 with Retry-After until SetCard.
func NewCardServer(card *protocol.AgentCard, versions []protocol.Version, maxAge time.Duration) *CardServer {
	if len(versions) == 0 {
		versions = []protocol.Version{protocol.V10, protocol.V03}
	}
	// 1.0 first: the first interface is the preferred one, and 1.0 clients
	// are the ones that read supportedInterfaces.
	ordered := make([]protocol.Version, 0, 2)
	for _, want := range []protocol.Version{protocol.V10, protocol.V03} {
		for _, v := range versions {
			if v == want {
				ordered = append(ordered, v)
				break
			}
		}
	}
	if maxAge < 0 {
		maxAge = 0
	}
	c := &CardServer{s: cardServerState{
		versions:     ordered,
		maxAge:       strconv.FormatInt(int64(maxAge/time.Second), 10),
		cacheControl: []string{"public, max-age=" + strconv.FormatInt(int64(maxAge/time.Second), 10)},
	}}
	if card != nil {
		c.s.set.Store(newCardSet(*card))
	}
	return c
}

// SetCard replaces the card served (a gateway's, when its agent's card
// changes); the documents rendered of the old one are dropped.
func (c *CardServer) SetCard(card protocol.AgentCard) {
	c.s.set.Store(newCardSet(card))
}

// cardRetryAfter is the Retry-After of the 503 answered while there is
// no card yet.
var cardRetryAfter = []string{"5"}

// URLFromRequest tells c that the RPC URL it is given is derived from
// each request (its Host, a trusted proxy's X-Forwarded-* headers), not
// configured: the card then varies with a header any client sets, so it is
// cached privately (Cache-Control: private) and no shared cache hands one
// client's card to another. Call it before serving.
func (c *CardServer) URLFromRequest() {
	c.s.cacheControl = []string{"private, max-age=" + c.s.maxAge}
}

// SignWith makes every document rendered carry signatures: sign returns
// the document for urls with them (A2A's card signatures name the URLs
// of the card they sign, so each rendering is signed once, when it is
// rendered and cached, never per request). Call it before serving.
func (c *CardServer) SignWith(sign func(doc []byte, urls CardURLs) ([]byte, error)) {
	c.s.sign = sign
}

// ServeCard writes the card whose interfaces are at urls.
// Methods other than GET and HEAD get 405 with an Allow header.
func (c *CardServer) ServeCard(w http.ResponseWriter, r *http.Request, urls CardURLs) {
	h := w.Header()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h["Allow"] = allowGetHead
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	set := c.s.set.Load()
	if set == nil {
		h["Retry-After"] = cardRetryAfter
		h["Cache-Control"] = noStore
		http.Error(w, "a2a: the agent card is not available yet", http.StatusServiceUnavailable)
		return
	}
	variant := docHybrid
	if v, ok := protocol.ParseVersionHeader(HeaderValue(r.Header, versionKey)); ok && v == protocol.V10 {
		variant = docV10
	}
	doc, err := set.doc(urls, variant, &c.s)
	if err != nil {
		h["Cache-Control"] = noStore
		http.Error(w, "a2a: the agent card could not be signed", http.StatusInternalServerError)
		return
	}
	h["Etag"] = doc.etagH
	now := time.Now()
	if !set.modified.After(now) {
		h["Last-Modified"] = set.lastModified
	}
	h["Vary"] = varyVersion
	h["Cache-Control"] = c.s.cacheControl
	if notModified(r, doc, set.modified, now) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = doc.length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(doc.body)
	}
}

// Document is the card document for urls: the 1.0 card (v10) or the
// hybrid one (what 0.3 clients read); an error while there is no card yet
// or when it could not be signed.
// The bytes are the cache's, not to be changed.
func (c *CardServer) Document(urls CardURLs, v10 bool) ([]byte, error) {
	set := c.s.set.Load()
	if set == nil {
		return nil, errors.New("the agent's card is not known yet")
	}
	variant := docHybrid
	if v10 {
		variant = docV10
	}
	doc, err := set.doc(urls, variant, &c.s)
	if err != nil {
		return nil, err
	}
	return doc.body, nil
}

// doc returns the variant of the card for urls, cached while the cache
// has room.
func (s *cardSet) doc(urls CardURLs, variant int, st *cardServerState) (*cardDoc, error) {
	s.mu.RLock()
	docs := s.cache[urls]
	s.mu.RUnlock()
	if docs != nil {
		return docs[variant], nil
	}
	docs, err := s.render(urls, st)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if prev := s.cache[urls]; prev != nil {
		docs = prev
	} else if len(s.cache) < maxCachedCardURLs {
		s.cache[urls] = docs
	}
	s.mu.Unlock()
	return docs[variant], nil
}

// render lists, for each version served, its JSON-RPC interface, then its
// HTTP+JSON and gRPC ones: the first is the one a client prefers.
func (s *cardSet) render(urls CardURLs, st *cardServerState) (*cardDocs, error) {
	versions := st.versions
	card := s.card
	card.Interfaces = make([]protocol.Interface, 0, len(versions)+2)
	for _, v := range versions {
		card.Interfaces = append(card.Interfaces, protocol.Interface{URL: urls.RPC, Binding: "JSONRPC", Version: v})
		if urls.REST != "" {
			card.Interfaces = append(card.Interfaces, protocol.Interface{URL: urls.REST, Binding: "HTTP+JSON", Version: v})
		}
		if urls.GRPC != "" {
			card.Interfaces = append(card.Interfaces, protocol.Interface{URL: urls.GRPC, Binding: "GRPC", Version: v})
		}
	}
	var docs cardDocs
	for i, v := range [...]protocol.CardVariant{docHybrid: protocol.CardHybrid, docV10: protocol.CardV10} {
		body := protocol.RenderCard(&card, v)
		if st.sign != nil {
			var err error
			if body, err = st.sign(body, urls); err != nil {
				return nil, err
			}
		}
		docs[i] = newCardDoc(body)
	}
	return &docs, nil
}

func newCardDoc(body []byte) *cardDoc {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	return &cardDoc{
		body:   body,
		etag:   etag,
		etagH:  []string{etag},
		length: []string{strconv.Itoa(len(body))},
	}
}

// etagListMatches evaluates an If-None-Match value against etag with the
// weak comparison RFC 9110 §13.1.2 prescribes for it: "*" matches, and
// W/"x" equals "x".
func etagListMatches(list, etag string) bool {
	for list != "" {
		list = strings.TrimLeft(list, " \t,")
		if list == "" {
			break
		}
		if list[0] == '*' {
			return true
		}
		list = strings.TrimPrefix(list, "W/")
		if list == "" || list[0] != '"' {
			// Not an entity tag: skip to the next list member.
			i := strings.IndexByte(list, ',')
			if i < 0 {
				return false
			}
			list = list[i+1:]
			continue
		}
		end := strings.IndexByte(list[1:], '"')
		if end < 0 {
			return false
		}
		tag := list[:end+2]
		if tag == strings.TrimPrefix(etag, "W/") {
			return true
		}
		list = list[end+2:]
	}
	return false
}
