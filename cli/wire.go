package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// maxFrame bounds the bytes of one response frame kept for printing or
// for reading an error's code; a longer one is passed on whole to the
// client but not kept (its --json line is cut and marked).
const maxFrame = 8 << 20

// The bounds on what the commands read of a server's answers, as the
// module bounds what it reads of an agent's: an endless answer is an
// error, not a process that grows until the machine gives out. They are
// variables only so that a test can lower them and stay quick.
var (
	// maxAnswer bounds one answer that is not a stream, and each event
	// of a stream (its raw lines): a task holding the module's largest
	// output (16 MiB) and history (8 MiB) fits, JSON-escaped.
	maxAnswer = 32 << 20
	// maxStream bounds the whole of one stream.
	maxStream = 128 << 20
)

// tooLarge is the error of an answer past one of the bounds. The body
// ends in it where the bound is, so a2a-go reads no further, and
// callFailed prints it.
type tooLarge struct {
	what  string
	bound int
}

func (e *tooLarge) Error() string {
	return fmt.Sprintf("%s is over %d MiB, the bound of the caddy a2a commands: reading stopped", e.what, e.bound>>20)
}

// wire is the round tripper under a2a-go's client: it watches what
// comes back — the
// status and media type of the last answer (a card check tells an A2A
// server from a page that is not one) and each response frame (a whole
// body, or one SSE event's data) as it is read, before a2a-go decodes
// it. The frames are what --json prints and where an error's exact code
// is read: a2a-go keeps the error's kind but not the code a server sent.
type wire struct {
	base    http.RoundTripper
	header  http.Header
	onFrame func([]byte)

	mu        sync.Mutex
	status    int
	mediaType string
	lastFrame []byte
	over      error // a *tooLarge, once the answer outgrew its bound
}

func newWire(o *Options) *wire {
	base := o.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return &wire{base: base, header: o.Header}
}

// client is an http.Client over w; streams are bounded by the command's
// context, not by a client timeout. The command's headers are on each
// request it is given (getCard, credentials), not added here, so that
// a redirect is followed by the client's rules and checkRedirect's.
func (w *wire) client() *http.Client {
	return &http.Client{Transport: w, CheckRedirect: w.checkRedirect}
}

// checkRedirect follows a redirect (at most 10, as net/http does) with
// none of the command's headers when it leaves the first request's
// origin. net/http alone drops only Authorization, Cookie and their
// kin, and only for another host name: an API key in -H, or a port
// of the same host, would still get the credentials.
func (w *wire) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if origin(req.URL.String()) != origin(via[0].URL.String()) {
		for k := range w.header {
			req.Header.Del(k)
		}
	}
	return nil
}

// setHeader puts the command's headers on a request it makes itself.
func (w *wire) setHeader(req *http.Request) {
	for k, vs := range w.header {
		req.Header[k] = append([]string(nil), vs...)
	}
}

// credentials is the a2a-go interceptor that puts the command's headers
// on every call: as service params, which a2a-go's HTTP transports set
// on the request they hand the client.
type credentials http.Header

// Before implements a2aclient.CallInterceptor.
func (c credentials) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	for k, vs := range c {
		req.ServiceParams.Append(k, vs...)
	}
	return ctx, nil, nil
}

// After implements a2aclient.CallInterceptor.
func (credentials) After(context.Context, *a2aclient.Response) error { return nil }

// RoundTrip implements http.RoundTripper.
func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	w.mu.Lock()
	w.status, w.mediaType, w.lastFrame, w.over = 0, "", nil, nil
	w.mu.Unlock()
	resp, err := w.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	w.mu.Lock()
	w.status, w.mediaType, w.lastFrame = resp.StatusCode, mt, nil
	w.mu.Unlock()
	resp.Body = &frameReader{rc: resp.Body, w: w, sse: mt == "text/event-stream"}
	return resp, nil
}

// answer is the status and media type of the last response.
func (w *wire) answer() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.mediaType
}

// last is the last whole frame read (nil before any).
func (w *wire) last() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastFrame
}

// bound is the error of the last answer when it outgrew a bound, or
// nil.
func (w *wire) bound() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.over
}

func (w *wire) frame(b []byte) {
	w.mu.Lock()
	w.lastFrame = b
	w.mu.Unlock()
	if w.onFrame != nil {
		w.onFrame(b)
	}
}

// frameReader passes a body through unchanged while cutting it into
// frames: for an SSE body the data of each event (its data lines joined
// by newlines, at the blank line that ends it), otherwise the whole body
// (at EOF or Close, whichever comes first). The stream's end also ends an
// SSE event, as it does for a2a-go's reader. It holds the body to
// maxAnswer, or an SSE body to maxStream and each event to maxAnswer:
// past a bound it reads as ending there, with a *tooLarge.
type frameReader struct {
	rc   io.ReadCloser
	w    *wire
	sse  bool
	done bool
	err  error // the bound's error, once past it

	total    int    // bytes read
	event    int    // bytes of the SSE event being read
	line     []byte // the SSE line being read
	data     []byte // the SSE event's data so far
	body     []byte // a plain body so far
	lineOver bool   // the line outgrew maxFrame
	over     bool   // the frame outgrew maxFrame
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.rc.Read(p)
	b := p[:n]
	bound, what := maxAnswer, "the server's answer"
	if f.sse {
		bound, what = maxStream, "the server's stream"
	}
	if f.total+len(b) > bound {
		b, f.err = b[:bound-f.total], &tooLarge{what, bound}
	}
	f.total += len(b)
	if f.sse {
		if k := f.scan(b); k < len(b) {
			b, f.err = b[:k], &tooLarge{"an event of the server's stream", maxAnswer}
		}
	} else {
		f.keep(&f.body, b, &f.over)
	}
	if f.err != nil {
		f.done = true // what was cut is no frame
		f.w.mu.Lock()
		f.w.over = f.err
		f.w.mu.Unlock()
		return len(b), f.err
	}
	if err == io.EOF {
		f.finish()
	}
	return n, err
}

func (f *frameReader) Close() error {
	f.finish()
	return f.rc.Close()
}

// keep appends b to dst up to maxFrame: past it, over is set and the
// rest is dropped, nothing later spliced on. What fits is kept, so a
// long line still shows what it is (its "data:").
func (f *frameReader) keep(dst *[]byte, b []byte, over *bool) {
	if *over {
		return
	}
	if room := maxFrame - len(*dst); len(b) > room {
		b, *over = b[:room], true
	}
	*dst = append(*dst, b...)
}

// scan reads b's SSE lines; it is how many bytes of b fit the event's
// bound (len(b) when all do; what is past it is not read).
func (f *frameReader) scan(b []byte) int {
	used := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		seg := i + 1
		if i < 0 {
			seg = len(b)
		}
		if f.event+seg > maxAnswer {
			return used + maxAnswer - f.event
		}
		f.event, used = f.event+seg, used+seg
		if i < 0 {
			f.keep(&f.line, b, &f.lineOver)
			return used
		}
		f.keep(&f.line, b[:i], &f.lineOver)
		b = b[i+1:]
		l := bytes.TrimSuffix(f.line, []byte("\r"))
		if len(l) == 0 {
			f.event = 0
		}
		f.sseLine(l)
		f.line, f.lineOver = f.line[:0], false
	}
	return used
}

func (f *frameReader) sseLine(l []byte) {
	if len(l) == 0 {
		f.emit(f.data)
		f.data, f.over = nil, false
		return
	}
	if v, ok := bytes.CutPrefix(l, []byte("data:")); ok {
		if f.data != nil {
			f.keep(&f.data, []byte("\n"), &f.over)
		}
		v = bytes.TrimPrefix(v, []byte(" "))
		if f.data == nil {
			f.data = []byte{}
		}
		if f.lineOver {
			// What fits of the line is kept; the frame is cut there.
			v = v[:min(len(v), maxFrame-len(f.data))]
			f.data = append(f.data, v...)
			f.over = true
			return
		}
		f.keep(&f.data, v, &f.over)
	}
}

func (f *frameReader) emit(b []byte) {
	if len(b) == 0 {
		return
	}
	if f.over {
		b = append(b[:len(b):len(b)], []byte(" …(cut: over 8MiB)")...)
	}
	f.w.frame(b)
}

func (f *frameReader) finish() {
	if f.done {
		return
	}
	f.done = true
	if f.sse {
		// As a2a-go's reader does, the stream's end ends its last event,
		// an unterminated last line included.
		if len(f.line) > 0 {
			f.sseLine(bytes.TrimSuffix(f.line, []byte("\r")))
		}
		f.emit(f.data)
		return
	}
	f.emit(f.body)
}
