package openaiagent

import (
	"encoding/base64"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// chatMessage is one message of the chat completions request: its content
// is a string, or a user's content parts ([]any of textPart and
// imagePart) when the message holds an image.
type chatMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// textPart and imagePart are the content parts the kind sends.
type textPart struct {
	Type string `json:"type"` // text
	Text string `json:"text"`
}

type imagePart struct {
	Type     string `json:"type"` // image_url
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// messages is the chat for req: the system prompt, the context's earlier
// tasks, this task's earlier turns, then the new message.
func (a *Agent) messages(req *upstream.RunRequest) ([]chatMessage, error) {
	out := make([]chatMessage, 0, 2+len(req.Context)+len(req.History))
	if a.cfg.System != "" {
		out = append(out, chatMessage{Role: "system", Content: a.cfg.System})
	}
	for _, list := range [][]protocol.Message{req.Context, req.History} {
		for i := range list {
			m, err := toChat(&list[i])
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	m, err := toChat(&req.Message)
	if err != nil {
		return nil, err
	}
	return append(out, m), nil
}

// toChat is one A2A message as a chat message: an agent's as the
// assistant's text, a user's as text or, when it holds an image, as
// content parts. Text parts are text, data parts their JSON, inline
// text/* files their text, image files an image part (inline bytes as a
// data URL, or the file's URL); other files are refused with -32005,
// which the caller gets as the answer.
func toChat(m *protocol.Message) (chatMessage, error) {
	if m.Role == protocol.RoleAgent {
		var b strings.Builder
		for i := range m.Parts {
			if t, ok := partText(&m.Parts[i]); ok {
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				b.WriteString(t)
			}
		}
		return chatMessage{Role: "assistant", Content: b.String()}, nil
	}
	var parts []any
	var texts []string
	images := false
	for i := range m.Parts {
		p := &m.Parts[i]
		if t, ok := partText(p); ok {
			parts, texts = append(parts, textPart{Type: "text", Text: t}), append(texts, t)
			continue
		}
		if t, ok := fileText(p); ok {
			parts, texts = append(parts, textPart{Type: "text", Text: t}), append(texts, t)
			continue
		}
		url, err := imageURL(p)
		if err != nil {
			return chatMessage{}, err
		}
		img := imagePart{Type: "image_url"}
		img.ImageURL.URL = url
		parts = append(parts, img)
		images = true
	}
	if !images {
		// Plain text content: what every OpenAI-compatible server reads
		// (some take content parts for images only).
		return chatMessage{Role: "user", Content: strings.Join(texts, "\n")}, nil
	}
	return chatMessage{Role: "user", Content: parts}, nil
}

// partText is a text or data part as text.
func partText(p *protocol.Part) (string, bool) {
	switch p.Kind {
	case protocol.PartText:
		return p.Text, true
	case protocol.PartData:
		return string(p.Data), true
	}
	return "", false
}

// fileText is an inline text/* file's bytes as text (the mount's
// input_modes let it through: the module never fetches a file's URL).
func fileText(p *protocol.Part) (string, bool) {
	if p.Kind != protocol.PartFile || p.Raw == nil || !strings.HasPrefix(protocol.BaseMediaType(p.MediaType), "text/") {
		return "", false
	}
	return string(p.Raw), true
}

// imageURL is an image file part as the chat API's image URL.
func imageURL(p *protocol.Part) (string, error) {
	mt := protocol.BaseMediaType(p.MediaType)
	if !strings.HasPrefix(mt, "image/") {
		what := "a file part without a media type"
		if mt != "" {
			what = "a file part of media type " + mt
		}
		return "", &upstream.Refusal{Code: protocol.CodeContentTypeNotSupported,
			Detail: "the chat completions API takes text and images, not " + what}
	}
	if p.URL != "" {
		return p.URL, nil
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(p.Raw), nil
}
