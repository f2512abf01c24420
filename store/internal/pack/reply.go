package pack

import (
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// A reply claim's answer (store.Reply) as the stores that persist it
// write it: a kind and a body, beside the digest and the lapse each
// store keeps its own way.

// The kinds of a reply's answer.
const (
	// ReplyPending: no answer yet, no body.
	ReplyPending = 'p'
	// ReplyTask: the body is the id of the task the turn made.
	ReplyTask = 't'
	// ReplyMessage: the body is the message, an event record.
	ReplyMessage = 'm'
)

// EncodeReply is r's answer: its kind and body.
func EncodeReply(r *store.Reply) (kind byte, body []byte) {
	switch {
	case r.Message != nil:
		return ReplyMessage, EncodeEvent(nil, "", &protocol.Event{Message: r.Message})
	case r.TaskID != "":
		return ReplyTask, []byte(r.TaskID)
	}
	return ReplyPending, nil
}

// DecodeReply is the reply claimed under digest whose answer EncodeReply
// wrote as kind and body.
func DecodeReply(kind byte, digest string, body []byte) (*store.Reply, error) {
	r := &store.Reply{Digest: digest}
	switch kind {
	case ReplyPending:
	case ReplyTask:
		r.TaskID = string(body)
	case ReplyMessage:
		ev, err := DecodeEvent(body, "")
		if err != nil {
			return nil, err
		}
		if ev.Message == nil {
			return nil, ErrCorrupt
		}
		r.Message = ev.Message
	default:
		return nil, ErrCorrupt
	}
	return r, nil
}
