package handler

import (
	"errors"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// ExtendedCard is the extended card for c, a caller of version v, whose
// params (1.0: {tenant?} or none; 0.3: none) are checked first:
//
//   - without Options.ExtendedCard the card declares none: 1.0 answers
//     -32004 (an operation not offered; -32007 is for a card declared
//     and missing), 0.3 -32007, the one error it defines;
//   - an anonymous caller is refused with CodeUnauthenticated, which the
//     bindings answer as HTTP 401 (with Challenge) or gRPC
//     UNAUTHENTICATED;
//   - otherwise the rendered document, for the binding to send as it is.
func (s *Service) ExtendedCard(c Caller, v protocol.Version, params []byte) ([]byte, *protocol.Error) {
	if perr := checkCardParams(params); perr != nil {
		return nil, perr
	}
	x := s.opts.ExtendedCard
	switch {
	case x == nil && v == protocol.V03:
		return nil, protocol.ErrExtendedCardNotConfigured()
	case x == nil:
		return nil, protocol.ErrUnsupportedOperation("This agent does not declare an extended Agent Card")
	case c.Owner == "":
		return nil, protocol.ErrUnauthenticated("The extended Agent Card is for authenticated callers")
	}
	if c.Endpoint == nil {
		return nil, internalError(c.log(s.log), "rendering the extended card", errors.New("the call names no endpoint to take the card's URLs from"))
	}
	u, err := c.Endpoint.RPCURL()
	if err != nil {
		return nil, internalError(c.log(s.log), "rendering the extended card", err)
	}
	doc, err := x.Render(u, v)
	if err != nil {
		return nil, internalError(c.log(s.log), "rendering the extended card", err)
	}
	return doc, nil
}

// Challenge is the WWW-Authenticate value for an anonymous caller of the
// extended card ("" for none).
func (s *Service) Challenge() string {
	if x := s.opts.ExtendedCard; x != nil {
		return x.Challenge
	}
	return ""
}

// checkCardParams accepts what GetExtendedAgentCard may carry: nothing,
// null, or an object whose only member is an empty tenant (this server
// declares no tenants).
func checkCardParams(params []byte) *protocol.Error {
	p := jsonwire.TrimSpace(params)
	if len(p) == 0 || string(p) == "null" || string(p) == "{}" {
		return nil
	}
	if jsonwire.KindOf(p) != jsonwire.Object {
		return protocol.ErrInvalidParams("params must be an object", protocol.FieldViolation{Field: "params", Description: "must be an object"})
	}
	it := jsonwire.NewObjIter(p)
	for {
		name, value, ok := it.Next()
		if !ok {
			break
		}
		if string(name) != "tenant" || string(jsonwire.TrimSpace(value)) != `""` {
			n := string(name)
			return protocol.ErrInvalidParams("Unknown member or tenant: "+n,
				protocol.FieldViolation{Field: n, Description: "this agent declares no tenant and takes no other member"})
		}
	}
	if it.Malformed() {
		return protocol.ErrInvalidParams("params must be an object", protocol.FieldViolation{Field: "params", Description: "must be an object"})
	}
	return nil
}
