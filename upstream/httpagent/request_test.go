package httpagent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func text(s string) protocol.Part { return protocol.Part{Kind: protocol.PartText, Text: s} }
func data(s string) protocol.Part {
	return protocol.Part{Kind: protocol.PartData, Data: json.RawMessage(s)}
}

func req(parts ...protocol.Part) *upstream.RunRequest {
	return &upstream.RunRequest{TaskID: "task-1", ContextID: "ctx-1", Message: protocol.Message{ID: "msg-1", Role: protocol.RoleUser, Parts: parts}}
}

// requestCases cover every branch of the input rule and every optional
// member of the body.
func requestCases() map[string]*upstream.RunRequest {
	fileURI := protocol.Part{Kind: protocol.PartFile, URL: "https://example.com/a.pdf", MediaType: "application/pdf", Filename: "a.pdf"}
	fileRaw := protocol.Part{Kind: protocol.PartFile, Raw: []byte("\x00\x01binary\xff"), MediaType: "application/octet-stream"}
	full := req(text("what is in this file?"), fileRaw)
	full.User = "alice"
	full.Metadata = json.RawMessage(`{"trace":"abc"}`)
	full.Message.Metadata = json.RawMessage(`{"lang":"en"}`)
	full.Extensions = []string{"https://ext.example/a", "urn:b"}
	full.History = []protocol.Message{
		{Role: protocol.RoleUser, Parts: []protocol.Part{text("hi")}},
		{Role: protocol.RoleAgent, Parts: []protocol.Part{text("which file?"), data(`{"need":"file"}`)}},
	}
	escapes := req(text("quote \" backslash \\ tab \t nl \n <b>&amp; \u2028 \x01 bad:\xff é 😀"))
	return map[string]*upstream.RunRequest{
		"input_text_single": req(text("hello")),
		"input_text_joined": req(text("line one"), text("line two"), text("")),
		"input_data_object": req(data(`{"a":1,"b":[true,null]}`)),
		"input_data_scalar": req(data(`42`)),
		"input_file_uri":    req(fileURI),
		"input_file_bytes":  req(fileRaw),
		"input_mixed":       req(text("see"), data(`{"x":1}`), fileURI),
		"input_two_data":    req(data(`1`), data(`"two"`)),
		"input_two_files":   req(fileURI, fileRaw),
		"input_empty":       req(),
		"full":              full,
		"escapes":           escapes,
	}
}

func TestRequestBodyGolden(t *testing.T) {
	for name, r := range requestCases() {
		t.Run(name, func(t *testing.T) {
			got, err := appendRequestBody(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "request", name+".json")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, bytes.TrimSuffix(want, []byte("\n"))) {
				t.Errorf("body differs from %s:\n got %s\nwant %s", path, got, want)
			}
			if ref := referenceBody(t, r); !bytes.Equal(got, ref) {
				t.Errorf("body differs from encoding/json:\n got %s\n ref %s", got, ref)
			}
		})
	}
}

// The reference encoding of the contract with encoding/json.
type (
	jFile struct {
		URI      string  `json:"uri,omitempty"`
		Bytes    *string `json:"bytes,omitempty"`
		MimeType string  `json:"mimeType,omitempty"`
		Name     string  `json:"name,omitempty"`
	}
	jPart struct {
		Text *string         `json:"text,omitempty"`
		Data json.RawMessage `json:"data,omitempty"`
		File *jFile          `json:"file,omitempty"`
	}
	jMsg struct {
		MessageID string          `json:"messageId"`
		Role      string          `json:"role"`
		Parts     []jPart         `json:"parts"`
		Metadata  json.RawMessage `json:"metadata,omitempty"`
	}
	jTurn struct {
		Role  string  `json:"role"`
		Parts []jPart `json:"parts"`
	}
	jBody struct {
		TaskID     string          `json:"taskId"`
		ContextID  string          `json:"contextId"`
		Input      any             `json:"input"`
		Message    jMsg            `json:"message"`
		History    []jTurn         `json:"history"`
		User       string          `json:"user,omitempty"`
		Metadata   json.RawMessage `json:"metadata,omitempty"`
		Extensions []string        `json:"extensions,omitempty"`
	}
)

func refFile(p protocol.Part) *jFile {
	f := &jFile{URI: p.URL, MimeType: p.MediaType, Name: p.Filename}
	if p.URL == "" {
		b := base64.StdEncoding.EncodeToString(p.Raw)
		f.Bytes = &b
	}
	return f
}

func refParts(ps []protocol.Part) []jPart {
	out := []jPart{}
	for _, p := range ps {
		switch p.Kind {
		case protocol.PartText:
			out = append(out, jPart{Text: &p.Text})
		case protocol.PartData:
			out = append(out, jPart{Data: p.Data})
		case protocol.PartFile:
			out = append(out, jPart{File: refFile(p)})
		}
	}
	return out
}

func referenceBody(t *testing.T, r *upstream.RunRequest) []byte {
	ps := r.Message.Parts
	var input any = refParts(ps)
	allText := len(ps) > 0
	var texts []string
	for _, p := range ps {
		allText = allText && p.Kind == protocol.PartText
		texts = append(texts, p.Text)
	}
	switch {
	case allText:
		input = strings.Join(texts, "\n")
	case len(ps) == 1 && ps[0].Kind == protocol.PartData:
		input = ps[0].Data
	case len(ps) == 1 && ps[0].Kind == protocol.PartFile:
		input = refFile(ps[0])
	}
	b := jBody{
		TaskID: r.TaskID, ContextID: r.ContextID, Input: input,
		Message:    jMsg{MessageID: r.Message.ID, Role: "user", Parts: refParts(ps), Metadata: r.Message.Metadata},
		History:    []jTurn{},
		User:       r.User,
		Metadata:   r.Metadata,
		Extensions: r.Extensions,
	}
	for _, h := range r.History {
		role := "user"
		if h.Role == protocol.RoleAgent {
			role = "agent"
		}
		b.History = append(b.History, jTurn{Role: role, Parts: refParts(h.Parts)})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestRequestBodyRawJSON(t *testing.T) {
	// Multi-line JSON from a caller is compacted; invalid JSON is refused.
	got, err := appendRequestBody(nil, req(data("{\n  \"a\": [1,\n 2]\n}")))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte(`"input":{"a":[1,2]}`)) || !json.Valid(got) {
		t.Errorf("multi-line data not compacted: %s", got)
	}
	if _, err := appendRequestBody(nil, req(data(`{"a":`))); err == nil {
		t.Error("invalid data part accepted")
	}
	// Absent and null metadata are left out.
	r := req(text("x"))
	r.Metadata = json.RawMessage("null")
	got, _ = appendRequestBody(nil, r)
	if bytes.Contains(got, []byte("metadata")) {
		t.Errorf("null metadata sent: %s", got)
	}
}

func TestSizeHintCoversCommonBodies(t *testing.T) {
	for name, r := range requestCases() {
		got, _ := appendRequestBody(make([]byte, 0, sizeHint(r)), r)
		if len(got) > sizeHint(r) {
			t.Errorf("%s: body %d bytes over its hint %d", name, len(got), sizeHint(r))
		}
	}
}
