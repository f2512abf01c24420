// Package cli is the client side of the caddy a2a subcommands: it reads
// any A2A server's card and says what is wrong with it, sends messages,
// lists and cancels tasks, over a2a-go's client (both protocol versions,
// JSON-RPC and HTTP+JSON), and prints what comes back for a person or,
// with JSON set, as the raw frames. It never imports Caddy: the root
// package registers the commands and calls it.
package cli

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// Exit codes of the subcommands, as a shell script reads them.
const (
	// ExitOK: the task completed (or the agent answered with a message),
	// or the command did what it was asked.
	ExitOK = 0
	// ExitFailed: the task failed, was canceled or rejected, the server
	// answered with an error, or the card has problems.
	ExitFailed = 1
	// ExitNeedsInput: the task waits for the caller (input-required or
	// auth-required); continue it with --task.
	ExitNeedsInput = 2
)

// DefaultTimeout bounds a whole command that is not a stream: card
// fetch, connection, the call and its answer.
const DefaultTimeout = 2 * time.Minute

// Options are the settings every subcommand shares.
type Options struct {
	// Header is sent with every request, the card's GET included (-H and
	// --user): only to the card's origin and TrustedOrigins, and never
	// on a redirect to another origin.
	Header http.Header
	// Version picks the interfaces of one protocol version ("0.3" or
	// "1.0"); empty: the newest the card offers.
	Version string
	// JSON prints raw frames (send), the card document (card) or the
	// task list as JSON instead of lines for a person.
	JSON bool
	// Out and Err are where answers and problems go.
	Out, Err io.Writer
	// Transport is the HTTP round tripper; nil: http.DefaultTransport.
	Transport http.RoundTripper
	// TrustedOrigins are the origins besides the card's own to which
	// Header may go, each "scheme://host[:port]" (TrustOrigin).
	TrustedOrigins []string

	// given are the flags above as given, masked (noteFlag): the hint
	// to continue a task repeats them.
	given []string
}

// AddHeader adds one "Field: value" header (the -H flag).
func (o *Options) AddHeader(kv string) error {
	k, v, ok := strings.Cut(kv, ":")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
		return fmt.Errorf("header %q: want \"Field: value\"", kv)
	}
	if o.Header == nil {
		o.Header = http.Header{}
	}
	o.Header.Add(textproto.CanonicalMIMEHeaderKey(k), v)
	o.noteFlag("-H", k+": "+maskHeader(k, v))
	return nil
}

// SetUser sends HTTP basic credentials ("name:password", the --user
// flag), what Caddy's basic_auth asks for.
func (o *Options) SetUser(userPass string) error {
	if userPass == "" {
		return nil
	}
	if !strings.Contains(userPass, ":") {
		return errors.New("--user: want name:password")
	}
	if o.Header == nil {
		o.Header = http.Header{}
	}
	o.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(userPass)))
	o.noteFlag("--user", maskUser(userPass))
	return nil
}

// checkVersion refuses a --version other than the two live ones.
func (o *Options) checkVersion() error {
	switch o.Version {
	case "", "0.3", "1.0":
		return nil
	}
	return fmt.Errorf("--version %q: want 0.3 or 1.0", o.Version)
}

// printf and errorf print for a person: every string argument is
// sanitized (shown), since most of them come from the server.
func (o *Options) printf(format string, args ...any) {
	fmt.Fprintf(o.Out, format, shown(args)...)
}

func (o *Options) errorf(format string, args ...any) {
	fmt.Fprintf(o.Err, format, shown(args)...)
}

// raw prints a document or frame as the server sent it, and a newline:
// the --json output, byte for byte.
func (o *Options) raw(b []byte) {
	o.Out.Write(append(b[:len(b):len(b)], '\n'))
}
