package protocol

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// Push notification configs, both versions, on one neutral model. 1.0
// carries a flat TaskPushNotificationConfig {tenant, taskId, id, url,
// token, authentication{scheme, credentials}}; 0.3 wraps the config:
// JSON-RPC {taskId, pushNotificationConfig{id, url, token,
// authentication{schemes[], credentials}}}, its proto (HTTP+JSON, gRPC)
// {name:"tasks/{id}/pushNotificationConfigs/{cid}", pushNotificationConfig}.

// PushConfig is one push notification config of a task.
type PushConfig struct {
	Tenant string
	TaskID string
	// ID is unique within the task; the server assigns one when the
	// caller leaves it out.
	ID  string
	URL string
	// Token is the caller's own token, sent back with every delivery.
	Token string
	Auth  *PushAuth
	// Version is the version the config was decoded in (set by the
	// codec): the body shape of its deliveries.
	Version Version
}

// PushAuth is how a delivery authenticates to the receiver: the
// Authorization header "<scheme> <credentials>".
type PushAuth struct {
	// Schemes holds 1.0's one scheme, or 0.3's list (the first is used).
	Schemes     []string
	Credentials string
}

// PushConfigID names one config of a task (get, delete).
type PushConfigID struct {
	Tenant string
	TaskID string
	// ID is the config's id; "" only for 0.3's deprecated get by task
	// alone (the task's first config).
	ID string
}

// PushListParams are the parameters of a push config list.
type PushListParams struct {
	Tenant    string
	TaskID    string
	PageSize  int
	PageToken string
}

// PushListResult is one page of a task's push configs.
type PushListResult struct {
	Configs       []PushConfig
	NextPageToken string
}

// The bounds of a push config's members (docs/security.md, the limits table). The URL and
// the secrets are kept with the task and sent with every delivery; the
// token, scheme and credentials become header values, so they must be
// printable ASCII.
const (
	// MaxPushURLBytes bounds a webhook URL.
	MaxPushURLBytes = 2048
	// MaxPushSecretBytes bounds the token and the credentials.
	MaxPushSecretBytes = 4096
	// maxPushSchemes bounds 0.3's scheme list; maxPushSchemeBytes one scheme.
	maxPushSchemes     = 8
	maxPushSchemeBytes = 64
)

// pushConfigKeys are the names of the wrapped config in 0.3: the
// JSON-RPC member, its snake form, and the 0.3 TCK's REST body member.
var pushConfigKeys = [...]string{"pushNotificationConfig", "push_notification_config", "config"}

// decodePushInner reads the members of a config proper (id, url, token,
// authentication) from obj at field; for 1.0 (flat) it also reads taskId
// and tenant. The url is required.
func decodePushInner(d *dialect, obj []byte, field string, c *PushConfig) *Error {
	if jsonwire.KindOf(obj) != jsonwire.Object {
		return invalidField(field, "must be an object")
	}
	c.Version = d.version
	if e := eachMember(obj, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "id":
			c.ID, e = readID(val, field, "id")
		case "url":
			c.URL, e = readHeaderSafe(val, field, "url", MaxPushURLBytes, false)
		case "token":
			c.Token, e = readHeaderSafe(val, field, "token", MaxPushSecretBytes, true)
		case "authentication":
			c.Auth, e = decodePushAuth(d, val, join(field, "authentication"))
		case "taskId", "task_id":
			if d.version == V10 {
				c.TaskID, e = readID(val, field, "taskId")
			}
		case "tenant":
			if d.version == V10 {
				c.Tenant, e = readID(val, field, "tenant")
			}
		}
		return e
	}); e != nil {
		return e
	}
	if c.URL == "" {
		return invalidField(join(field, "url"), "is required")
	}
	return nil
}

// decodePushAuth reads authentication: 1.0 {scheme, credentials}, 0.3
// {schemes[], credentials}.
func decodePushAuth(d *dialect, v []byte, field string) (*PushAuth, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Object {
		return nil, invalidField(field, "must be an object")
	}
	a := &PushAuth{}
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "scheme":
			if d.version == V10 {
				var s string
				s, e = readScheme(val, field, "scheme")
				a.Schemes = []string{s}
			}
		case "schemes":
			if d.version == V03 {
				a.Schemes, e = readSchemes(val, join(field, "schemes"))
			}
		case "credentials":
			a.Credentials, e = readHeaderSafe(val, field, "credentials", MaxPushSecretBytes, true)
		}
		return e
	}); e != nil {
		return nil, e
	}
	if len(a.Schemes) == 0 {
		name := "schemes"
		if d.version == V10 {
			name = "scheme"
		}
		return nil, invalidField(join(field, name), "is required")
	}
	return a, nil
}

func readSchemes(v []byte, field string) ([]string, *Error) {
	return readStrings(v, "", field, "must be an array", maxPushSchemes, func(field string) *Error {
		return invalidField(field, "must hold at most "+strconv.Itoa(maxPushSchemes)+" schemes")
	}, func(el []byte, i int) (string, *Error) {
		return readScheme(el, "", indexPath(field, i))
	})
}

// readScheme reads an HTTP authentication scheme: an RFC 9110 token.
func readScheme(v []byte, parent, name string) (string, *Error) {
	s, e := readString(v, parent, name)
	if e != nil {
		return "", e
	}
	if s == "" || len(s) > maxPushSchemeBytes || strings.IndexFunc(s, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return "", invalidField(join(parent, name), "must be an HTTP authentication scheme (a token of at most "+strconv.Itoa(maxPushSchemeBytes)+" bytes)")
	}
	return s, nil
}

func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return r < 0x80 && strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// readHeaderSafe reads a string of at most max bytes of printable ASCII
// (spaces too when spaces): what can go into a header value or a URL
// as it is.
func readHeaderSafe(v []byte, parent, name string, max int, spaces bool) (string, *Error) {
	if len(v) > 6*max+2 {
		return "", invalidField(join(parent, name), "must be at most "+strconv.Itoa(max)+" bytes")
	}
	s, e := readString(v, parent, name)
	if e != nil {
		return "", e
	}
	if len(s) > max {
		return "", invalidField(join(parent, name), "must be at most "+strconv.Itoa(max)+" bytes")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || (c == ' ' && !spaces) {
			return "", invalidField(join(parent, name), "must be printable ASCII")
		}
	}
	return s, nil
}

// decodeInlinePush reads the config inline in a send's configuration:
// 1.0's flat config (taskId left out), 0.3's bare config.
func decodeInlinePush(d *dialect, v []byte, field string) (*PushConfig, *Error) {
	c := &PushConfig{}
	if e := decodePushInner(d, v, field, c); e != nil {
		return nil, e
	}
	return c, nil
}

// decodePushSet reads create/set params.
func decodePushSet(d *dialect, params []byte) (*PushConfig, *Error) {
	p, e := checkParams(params)
	if e != nil {
		return nil, e
	}
	c := &PushConfig{}
	if d.version == V10 {
		if e := decodePushInner(d, p, "", c); e != nil {
			return nil, e
		}
	} else {
		var inner []byte
		if e := eachMember(p, "", func(key, val []byte) (e *Error) {
			switch k := string(key); k {
			case "taskId", "task_id":
				c.TaskID, e = readID(val, "", "taskId")
			case "name":
				// tasks/{id}/pushNotificationConfigs/{cid}: the cid is
				// the config's unless the config names its own. An
				// empty name is the proto's unset.
				if string(val) == `""` {
					return nil
				}
				var task, cfg string
				task, cfg, e = readResourceName(val, "name", true)
				c.TaskID = task
				if c.ID == "" {
					c.ID = cfg
				}
			case "parent":
				c.TaskID, _, e = readResourceName(val, "parent", false)
			case "configId", "config_id":
				c.ID, e = readID(val, "", "configId")
			default:
				for _, ck := range pushConfigKeys {
					if k == ck {
						inner = val
					}
				}
			}
			return e
		}); e != nil {
			return nil, e
		}
		if inner == nil {
			return nil, invalidField(pushConfigKeys[0], "is required")
		}
		if wrapped(inner) {
			// The 0.3 gRPC create request: config is itself a
			// TaskPushNotificationConfig {name, pushNotificationConfig}.
			w, e := decodePushSet(d, withTask(inner, c.TaskID))
			if e != nil {
				return nil, e
			}
			if w.ID == "" {
				w.ID = c.ID
			}
			return w, nil
		}
		var in PushConfig
		if e := decodePushInner(d, inner, pushConfigKeys[0], &in); e != nil {
			return nil, e
		}
		if in.ID == "" {
			in.ID = c.ID
		}
		in.TaskID = c.TaskID
		c = &in
	}
	if c.TaskID == "" {
		return nil, invalidField("taskId", "is required")
	}
	return c, nil
}

// readResourceName reads "tasks/{id}" (withConfig false) or
// "tasks/{id}/pushNotificationConfigs/{cid}".
func readResourceName(v []byte, name string, withConfig bool) (task, cfg string, e *Error) {
	s, e := readHeaderSafe(v, "", name, 2*maxIdentifierBytes+64, false)
	if e != nil {
		return "", "", e
	}
	rest, ok := strings.CutPrefix(s, "tasks/")
	if withConfig {
		var found bool
		task, cfg, found = strings.Cut(rest, "/pushNotificationConfigs/")
		ok = ok && found && cfg != "" && !strings.Contains(cfg, "/")
	} else {
		task = rest
	}
	if !ok || task == "" || strings.Contains(task, "/") || len(task) > maxIdentifierBytes || len(cfg) > maxIdentifierBytes {
		want := "tasks/{id}"
		if withConfig {
			want += "/pushNotificationConfigs/{configId}"
		}
		return "", "", invalidField(name, "must be "+want)
	}
	return task, cfg, nil
}

// decodePushConfigID reads get and delete params: 1.0 {taskId, id}; 0.3
// {id, pushNotificationConfigId} or the proto's {name}.
func decodePushConfigID(d *dialect, params []byte, needID bool) (*PushConfigID, *Error) {
	p, e := checkParams(params)
	if e != nil {
		return nil, e
	}
	c := &PushConfigID{}
	taskKey, idKey := "taskId", "id"
	if d.version == V03 {
		taskKey, idKey = "id", "pushNotificationConfigId"
	}
	if e := eachMember(p, "", func(key, val []byte) (e *Error) {
		switch k := string(key); {
		case k == "tenant" && d.version == V10:
			c.Tenant, e = readID(val, "", "tenant")
		case k == "taskId" || k == "task_id":
			if d.version == V10 {
				c.TaskID, e = readID(val, "", "taskId")
			}
		case k == "id":
			if d.version == V10 {
				c.ID, e = readID(val, "", "id")
			} else {
				c.TaskID, e = readID(val, "", "id")
			}
		case d.version == V03 && (k == "pushNotificationConfigId" || k == "push_notification_config_id"):
			c.ID, e = readID(val, "", "pushNotificationConfigId")
		case d.version == V03 && k == "name":
			c.TaskID, c.ID, e = readResourceName(val, "name", true)
		}
		return e
	}); e != nil {
		return nil, e
	}
	if c.TaskID == "" {
		return nil, invalidField(taskKey, "is required")
	}
	if c.ID == "" && (needID || d.version == V10) {
		return nil, invalidField(idKey, "is required")
	}
	return c, nil
}

// decodePushList reads list params: 1.0 {taskId, pageSize, pageToken};
// 0.3 {id} or the proto's {parent}.
func decodePushList(d *dialect, params []byte) (*PushListParams, *Error) {
	p, e := checkParams(params)
	if e != nil {
		return nil, e
	}
	l := &PushListParams{}
	if e := eachMember(p, "", func(key, val []byte) (e *Error) {
		switch k := string(key); {
		case d.version == V10 && k == "tenant":
			l.Tenant, e = readID(val, "", "tenant")
		case d.version == V10 && (k == "taskId" || k == "task_id"):
			l.TaskID, e = readID(val, "", "taskId")
		case d.version == V10 && (k == "pageSize" || k == "page_size"):
			var n *int
			n, e = readNonNegative(val, "", "pageSize")
			if e == nil {
				l.PageSize = *n
			}
		case d.version == V10 && (k == "pageToken" || k == "page_token"):
			l.PageToken, e = readID(val, "", "pageToken")
		case d.version == V03 && k == "id":
			l.TaskID, e = readID(val, "", "id")
		case d.version == V03 && k == "parent":
			l.TaskID, _, e = readResourceName(val, "parent", false)
		}
		return e
	}); e != nil {
		return nil, e
	}
	if l.TaskID == "" {
		name := "id"
		if d.version == V10 {
			name = "taskId"
		}
		return nil, invalidField(name, "is required")
	}
	return l, nil
}

// appendPushConfig writes one config in d's shape.
func appendPushConfig(d *dialect, dst []byte, c *PushConfig) []byte {
	if d.version == V10 {
		dst = append(dst, '{')
		open := len(dst)
		if c.Tenant != "" {
			dst = append(dst, `"tenant":`...)
			dst = jsonwire.AppendString(dst, c.Tenant)
		}
		dst = appendConfigKey(dst, open, "id")
		dst = jsonwire.AppendString(dst, c.ID)
		dst = append(dst, `,"taskId":`...)
		dst = jsonwire.AppendString(dst, c.TaskID)
		dst = appendPushMembers(d, dst, c)
		return append(dst, '}')
	}
	dst = append(dst, '{')
	if !d.tagged {
		// The 0.3 proto names the config by its resource.
		dst = append(dst, `"name":`...)
		dst = jsonwire.AppendString(dst, "tasks/"+c.TaskID+"/pushNotificationConfigs/"+c.ID)
	} else {
		dst = append(dst, `"taskId":`...)
		dst = jsonwire.AppendString(dst, c.TaskID)
	}
	dst = append(dst, `,"pushNotificationConfig":{"id":`...)
	dst = jsonwire.AppendString(dst, c.ID)
	dst = appendPushMembers(d, dst, c)
	return append(dst, `}}`...)
}

// appendPushMembers appends `,"url":…` and the optional token and
// authentication.
func appendPushMembers(d *dialect, dst []byte, c *PushConfig) []byte {
	dst = append(dst, `,"url":`...)
	dst = jsonwire.AppendString(dst, c.URL)
	dst = appendOptString(dst, `,"token":`, c.Token)
	if c.Auth != nil {
		if d.version == V10 {
			dst = append(dst, `,"authentication":{"scheme":`...)
			dst = jsonwire.AppendString(dst, c.Auth.Schemes[0])
		} else {
			dst = append(dst, `,"authentication":{"schemes":`...)
			dst = jsonwire.AppendStringArray(dst, c.Auth.Schemes)
		}
		dst = appendOptString(dst, `,"credentials":`, c.Auth.Credentials)
		dst = append(dst, '}')
	}
	return dst
}

// appendPushList writes a list result: 1.0 and the 0.3 proto
// {configs:[…], nextPageToken?}, 0.3 JSON-RPC a bare array.
func appendPushList(d *dialect, dst []byte, r *PushListResult) []byte {
	bare := d.tagged
	if !bare {
		dst = append(dst, `{"configs":`...)
	}
	dst = append(dst, '[')
	for i := range r.Configs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendPushConfig(d, dst, &r.Configs[i])
	}
	dst = append(dst, ']')
	if bare {
		return dst
	}
	dst = appendOptString(dst, `,"nextPageToken":`, r.NextPageToken)
	return append(dst, '}')
}

func (c dialectCodec) DecodePushConfig(params json.RawMessage) (*PushConfig, error) {
	p, e := decodePushSet(c.d, params)
	return p, asError(e)
}

func (c dialectCodec) DecodePushConfigID(params json.RawMessage, needID bool) (*PushConfigID, error) {
	p, e := decodePushConfigID(c.d, params, needID)
	return p, asError(e)
}

func (c dialectCodec) DecodePushList(params json.RawMessage) (*PushListParams, error) {
	p, e := decodePushList(c.d, params)
	return p, asError(e)
}

func (c dialectCodec) AppendPushConfig(dst []byte, p *PushConfig) []byte {
	return appendPushConfig(c.d, dst, p)
}

func (c dialectCodec) AppendPushList(dst []byte, r *PushListResult) []byte {
	return appendPushList(c.d, dst, r)
}

// wrapped reports whether a 0.3 config object is a
// TaskPushNotificationConfig (it holds the config proper) rather than a
// config.
func wrapped(obj []byte) bool {
	found := false
	it := jsonwire.NewObjIter(obj)
	for {
		k, _, ok := it.Next()
		if !ok {
			return found
		}
		switch string(k) {
		case "pushNotificationConfig", "push_notification_config":
			found = true
		}
	}
}

// withTask is obj with a leading "taskId" member when task is set, so a
// wrapped config whose name is empty still names its parent's task (a
// name in obj, read later, wins).
func withTask(obj []byte, task string) []byte {
	if task == "" {
		return obj
	}
	out := append([]byte(`{"taskId":`), jsonwire.AppendString(nil, task)...)
	rest := jsonwire.TrimSpace(obj)[1:]
	if len(jsonwire.TrimSpace(rest)) > 1 {
		out = append(out, ',')
	}
	return append(out, rest...)
}
