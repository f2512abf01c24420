package rest

import (
	"net/http"
	"net/url"
	"sort"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The HTTP+JSON binding carries in its path and query what JSON-RPC
// carries in params. Rather than validate them a second way, the binding
// writes them as the JSON params object the 1.0 codec reads, so that an
// id, a page size or a state is held to exactly the rules (and answered
// with exactly the errors) of the JSON-RPC call.

// queryParam is one query parameter a route reads: the params member it
// becomes, and whether it is a boolean (written as a JSON literal when it
// is true or false; anything else is written as a string, which the codec
// refuses as a boolean).
type queryParam struct {
	member string
	isBool bool
}

// getTaskQuery and listTasksQuery are the query parameters of GetTask and
// ListTasks: camelCase, as A2A 1.0 §11 names them, and the proto's field
// names (snake_case), which gRPC-to-HTTP transcoding accepts as well and
// clients built on it send (the official conformance kit's 0.3 client
// sends history_length); a2a-go's REST client sends lastUpdatedAfter for
// statusTimestampAfter. Both spellings of one member given together are
// that member given twice.
var (
	getTaskQuery = map[string]queryParam{
		"historyLength":  {member: "historyLength"},
		"history_length": {member: "historyLength"},
	}
	listTasksQuery = map[string]queryParam{
		"contextId":              {member: "contextId"},
		"context_id":             {member: "contextId"},
		"status":                 {member: "status"},
		"pageSize":               {member: "pageSize"},
		"page_size":              {member: "pageSize"},
		"pageToken":              {member: "pageToken"},
		"page_token":             {member: "pageToken"},
		"historyLength":          {member: "historyLength"},
		"history_length":         {member: "historyLength"},
		"statusTimestampAfter":   {member: "statusTimestampAfter"},
		"status_timestamp_after": {member: "statusTimestampAfter"},
		"lastUpdatedAfter":       {member: "statusTimestampAfter"},
		"includeArtifacts":       {member: "includeArtifacts", isBool: true},
		"include_artifacts":      {member: "includeArtifacts", isBool: true},
	}
)

// versionParam is the query parameter A2A lets stand for the A2A-Version
// header; every route accepts it.
const versionParam = "A2A-Version"

// maxQueryParams bounds the query parameters of one request: more than
// any route has names for is a mistake or an attack.
const maxQueryParams = 16

// queryParams appends to dst the members the query q gives a route that
// reads the parameters known: `,"name":value` for each. An unknown
// parameter, or a known one given twice, is -32602 naming it.
func queryParams(dst []byte, q url.Values, known map[string]queryParam) ([]byte, *protocol.Error) {
	if len(q) > maxQueryParams {
		return dst, protocol.ErrInvalidParams("", protocol.FieldViolation{Field: "query", Description: "has too many parameters"})
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	// A fixed order: the first error is the same whatever the map does.
	sort.Strings(names)
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		vals := q[name]
		if name == versionParam {
			continue
		}
		p, ok := known[name]
		if !ok {
			return dst, protocol.ErrInvalidParams("", protocol.FieldViolation{Field: safeName(name), Description: "is not a query parameter of this route"})
		}
		if len(vals) > 1 || seen[p.member] {
			return dst, protocol.ErrInvalidParams("", protocol.FieldViolation{Field: p.member, Description: "is given more than once"})
		}
		seen[p.member] = true
		dst = append(dst, ',')
		dst = jsonwire.AppendString(dst, p.member)
		dst = append(dst, ':')
		if v := vals[0]; p.isBool && (v == "true" || v == "false") {
			dst = append(dst, v...)
		} else {
			dst = jsonwire.AppendString(dst, v)
		}
	}
	return dst, nil
}

// safeName is a caller's parameter name as an error may quote it: at most
// 64 bytes of it.
func safeName(name string) string {
	const max = 64
	if len(name) > max {
		name = name[:max]
	}
	return name
}

// object is the params object of the members more (each with its
// leading comma).
func object(dst, more []byte) []byte {
	dst = append(dst, '{')
	if len(more) > 0 {
		dst = append(dst, more[1:]...)
	}
	return append(dst, '}')
}

// idParams is the params object {"id":<id>} followed by the members of
// more (each with its leading comma), closed.
func idParams(dst []byte, id string, more []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonwire.AppendString(dst, id)
	dst = append(dst, more...)
	return append(dst, '}')
}

// pushListQuery are the query parameters of a push config list (1.0).
var pushListQuery = map[string]queryParam{
	"pageSize":  {member: "pageSize"},
	"pageToken": {member: "pageToken"},
}

// pushParams are the codec params of a push config route: the path's
// task (and config) ids in the names of the route's version, with the
// body's config (set) or the query (1.0 list). A body's own task id is
// dropped: the path names the task.
func pushParams(r *http.Request, rt Route, body []byte, maxDepth int) ([]byte, *protocol.Error) {
	taskKey, cfgKey := "taskId", "id"
	if rt.V03 {
		taskKey, cfgKey = "id", "pushNotificationConfigId"
	}
	var dst []byte
	switch rt.Op {
	case protocol.MethodPushSet:
		if perr := protocol.CheckBody(body, maxDepth); perr != nil {
			return nil, perr
		}
		dst = append(dst, '{')
		it := jsonwire.NewObjIter(jsonwire.TrimSpace(body))
		for {
			k, v, ok := it.Next()
			if !ok {
				break
			}
			switch string(k) {
			case "taskId", "task_id", "parent":
				continue
			}
			dst = jsonwire.AppendString(dst, string(k))
			dst = append(dst, ':')
			dst = append(dst, v...)
			dst = append(dst, ',')
		}
		// 0.3's set names the task taskId too.
		dst = append(dst, `"taskId":`...)
		dst = jsonwire.AppendString(dst, rt.TaskID)
		return append(dst, '}'), nil
	case protocol.MethodPushList:
		var more []byte
		if !rt.V03 && r.URL.RawQuery != "" {
			var perr *protocol.Error
			if more, perr = queryParams(nil, r.URL.Query(), pushListQuery); perr != nil {
				return nil, perr
			}
		}
		dst = append(dst, '{')
		dst = jsonwire.AppendString(dst, taskKey)
		dst = append(dst, ':')
		dst = jsonwire.AppendString(dst, rt.TaskID)
		dst = append(dst, more...)
		return append(dst, '}'), nil
	}
	dst = append(dst, '{')
	dst = jsonwire.AppendString(dst, taskKey)
	dst = append(dst, ':')
	dst = jsonwire.AppendString(dst, rt.TaskID)
	dst = append(dst, ',')
	dst = jsonwire.AppendString(dst, cfgKey)
	dst = append(dst, ':')
	dst = jsonwire.AppendString(dst, rt.ConfigID)
	return append(dst, '}'), nil
}
