package cli

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"sync"
)

// maxFrame bounds the bytes of one response frame kept for printing or
// for reading an error's code; a longer one is passed on whole to the
// client but not kept (its --json line is cut and marked).
const maxFrame = 8 << 20

// wire is the round tripper under a2a-go's client: it adds the
// command's headers to every request and watches what comes back — the
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
}

func newWire(o *Options) *wire {
	base := o.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return &wire{base: base, header: o.Header}
}

// client is an http.Client over w; streams are bounded by the command's
// context, not by a client timeout.
func (w *wire) client() *http.Client { return &http.Client{Transport: w} }

// RoundTrip implements http.RoundTripper.
func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(w.header) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range w.header {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	w.mu.Lock()
	w.status, w.mediaType, w.lastFrame = 0, "", nil
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
// SSE event, as it does for a2a-go's reader.
type frameReader struct {
	rc   io.ReadCloser
	w    *wire
	sse  bool
	done bool

	line     []byte // the SSE line being read
	data     []byte // the SSE event's data so far
	body     []byte // a plain body so far
	lineOver bool   // the line outgrew maxFrame
	over     bool   // the frame outgrew maxFrame
}

func (f *frameReader) Read(p []byte) (int, error) {
	n, err := f.rc.Read(p)
	if f.sse {
		f.scan(p[:n])
	} else {
		f.keep(&f.body, p[:n], &f.over)
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

// keep appends b to dst unless that outgrows maxFrame: then over is set
// and the rest is dropped, not spliced on.
func (f *frameReader) keep(dst *[]byte, b []byte, over *bool) {
	if *over || len(*dst)+len(b) > maxFrame {
		*over = true
		return
	}
	*dst = append(*dst, b...)
}

func (f *frameReader) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.keep(&f.line, b, &f.lineOver)
			return
		}
		f.keep(&f.line, b[:i], &f.lineOver)
		b = b[i+1:]
		f.sseLine(bytes.TrimSuffix(f.line, []byte("\r")))
		f.line, f.lineOver = f.line[:0], false
	}
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
