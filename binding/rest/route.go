package rest

import (
	"net/url"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Route is what a request path under the binding's base names: the
// operation, the task and push config ids in it, and the methods the path
// allows. The zero Route is no route (404).
type Route struct {
	// Op is the operation of the request's method on the path; 0 when
	// the path exists but the method is not one of Allow (405).
	Op protocol.Method
	// TaskID and ConfigID are the path's ids, unescaped.
	TaskID, ConfigID string
	// Allow lists the methods the path answers, as the Allow header.
	Allow string
	// Body reports whether the operation reads a request body.
	Body bool
	// V03 reports a route of 0.3's HTTP+JSON binding (under /v1): bodies
	// and results in the 0.3 proto's ProtoJSON.
	V03 bool
}

// Found reports whether the path is a route of the binding.
func (rt Route) Found() bool { return rt.Allow != "" }

// The Allow values of the paths.
const (
	allowPost       = "POST"
	allowGet        = "GET"
	allowGetPost    = "GET, POST"
	allowGetDelete  = "GET, DELETE"
	taskActionSep   = ':'
	maxPathSegments = 4
)

// Match maps the method and path (the request path with the base removed,
// escaped as sent: "/tasks/abc:cancel") to its Route.
//
// The 1.0 routes (A2A 1.0 §11):
//
//	POST        /message:send
//	POST        /message:stream
//	GET         /tasks
//	GET         /tasks/{id}
//	POST        /tasks/{id}:cancel
//	GET, POST   /tasks/{id}:subscribe (the spec's table says POST, its proto GET)
//	GET, POST   /tasks/{id}/pushNotificationConfigs
//	GET, DELETE /tasks/{id}/pushNotificationConfigs/{configId}
//	GET         /extendedAgentCard
//
// and under /v1 the routes of 0.3 (as a2a-go's and a2a-js's 0.3 REST
// clients call them): the same but for GET /v1/tasks, which 0.3 does not
// have, and GET /v1/card, 0.3's name for the extended card.
//
// Ids are single path segments, percent-decoded; a task id that ends in
// ":cancel" or ":subscribe" names that action. A server refuses the paths
// UnsafePath reports before it matches one.
func Match(method, path string) Route {
	if rel, ok := strings.CutPrefix(path, "/v1/"); ok {
		rel = "/" + rel
		switch {
		case rel == "/card":
			rt := only(true, method, allowGet, protocol.MethodExtendedCard, false)
			rt.V03 = true
			return rt
		case rel == "/tasks", rel == "/extendedAgentCard":
			return Route{}
		}
		rt := match(method, rel)
		rt.V03 = rt.Found()
		return rt
	}
	return match(method, path)
}

// match is Match for the 1.0 routes.
func match(method, path string) Route {
	if !strings.HasPrefix(path, "/") {
		return Route{}
	}
	segs := strings.Split(path[1:], "/")
	if len(segs) > maxPathSegments {
		return Route{}
	}
	switch segs[0] {
	case "message:send":
		return only(len(segs) == 1, method, allowPost, protocol.MethodSend, true)
	case "message:stream":
		return only(len(segs) == 1, method, allowPost, protocol.MethodStream, true)
	case "extendedAgentCard":
		return only(len(segs) == 1, method, allowGet, protocol.MethodExtendedCard, false)
	case "tasks":
	default:
		return Route{}
	}
	if len(segs) == 1 {
		return only(true, method, allowGet, protocol.MethodListTasks, false)
	}
	id, action := segs[1], ""
	if len(segs) == 2 {
		if i := strings.LastIndexByte(id, taskActionSep); i >= 0 {
			switch id[i+1:] {
			case "cancel", "subscribe":
				id, action = id[:i], id[i+1:]
			}
		}
	}
	taskID, ok := segment(id)
	if !ok {
		return Route{}
	}
	var rt Route
	switch {
	case len(segs) == 2 && action == "":
		rt = only(true, method, allowGet, protocol.MethodGetTask, false)
	case len(segs) == 2 && action == "cancel":
		// An empty body, {} or {"metadata":…}: a2a-go sends none at all.
		rt = only(true, method, allowPost, protocol.MethodCancelTask, true)
	case len(segs) == 2:
		rt = only(true, method, allowGetPost, protocol.MethodSubscribe, false)
	case segs[2] != "pushNotificationConfigs":
		return Route{}
	case len(segs) == 3:
		rt = Route{Allow: allowGetPost}
		switch method {
		case "GET":
			rt.Op = protocol.MethodPushList
		case "POST":
			rt.Op, rt.Body = protocol.MethodPushSet, true
		}
	default:
		cfg, ok := segment(segs[3])
		if !ok {
			return Route{}
		}
		rt = Route{Allow: allowGetDelete, ConfigID: cfg}
		switch method {
		case "GET":
			rt.Op = protocol.MethodPushGet
		case "DELETE":
			rt.Op = protocol.MethodPushDelete
		}
	}
	rt.TaskID = taskID
	return rt
}

// UnsafePath reports whether a request path, escaped as sent
// (r.URL.EscapedPath()), has a segment that decodes to "." or "..", an
// encoded slash (%2F) or an encoded or literal backslash (%5C, \). Caddy's
// path matchers see such a path decoded and cleaned, "/a2a/rest/tasks/
// %2E%2E%2F%2E%2E%2F%2E%2E%2Fx" as "/x", while the routes would take it as
// a path under rest_path: an auth gate written for rest_path would not
// cover the request its route answers. No id the module makes needs any
// of them, so such a path is refused rather than given a meaning.
func UnsafePath(escaped string) bool {
	for seg := range strings.SplitSeq(escaped, "/") {
		if strings.IndexByte(seg, '\\') >= 0 {
			return true
		}
		if strings.IndexByte(seg, '%') < 0 {
			if seg == "." || seg == ".." {
				return true
			}
			continue
		}
		v, err := url.PathUnescape(seg)
		if err != nil {
			// Not a route either: Match answers it as none.
			continue
		}
		if v == "." || v == ".." || strings.ContainsAny(v, "/\\") {
			return true
		}
	}
	return false
}

// only is the Route of a path that answers one method (allow), or none
// when the path is not one (found false).
func only(found bool, method, allow string, op protocol.Method, body bool) Route {
	if !found {
		return Route{}
	}
	rt := Route{Allow: allow}
	if method == allow || (allow == allowGetPost && (method == "GET" || method == "POST")) {
		rt.Op, rt.Body = op, body
	}
	return rt
}

// segment unescapes one path segment; an empty one, or one that does not
// decode, is no id.
func segment(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	if strings.IndexByte(s, '%') < 0 {
		return s, true
	}
	v, err := url.PathUnescape(s)
	if err != nil || v == "" {
		return "", false
	}
	return v, true
}
