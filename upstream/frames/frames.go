// Package frames reads the framing of an agent's event stream: NDJSON
// lines or Server-Sent Events, one frame's bytes at a time, each bounded.
// It never waits for more input than the frame it returns, so a frame
// reaches the caller the moment it arrives. The http kind parses its
// contract's event objects from them, the a2a kind JSON-RPC responses.
package frames

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// ErrTooLarge: one NDJSON line or SSE event is over the reader's bound.
var ErrTooLarge = errors.New("upstream: event over the size limit")

// ErrTruncated: the stream ended inside an SSE event (data lines without
// the blank line that dispatches them). The SSE spec drops such an event;
// for an agent it means the stream broke.
var ErrTruncated = errors.New("upstream: event stream ended inside an event")

// Reader reads NDJSON lines or SSE events from a stream.
type Reader struct {
	br      *bufio.Reader
	sse     bool
	max     int
	line    []byte
	data    []byte // SSE data buffer
	hasData bool   // a data field was seen since the last dispatch
	skipLF  bool   // the last line ended in CR: a following LF belongs to it
	started bool   // past a possible byte order mark
}

// bufSize is the read buffer of a Reader whose frames may be that large;
// a smaller bound gets a buffer of its own size.
const bufSize = 32 << 10

// bufs keeps the read buffers of released Readers: every streamed run
// takes one, and allocating 32KiB per run for answers of a few hundred
// bytes showed in the gateway's profile (bench/run.sh, the gateway step).
var bufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, bufSize) }}

// NewReader reads r as SSE (sse) or NDJSON, each frame at most max bytes.
// Release gives its buffer back once the stream is done with.
func NewReader(r io.Reader, sse bool, max int) *Reader {
	var br *bufio.Reader
	if max+1 >= bufSize {
		br = bufs.Get().(*bufio.Reader)
		br.Reset(r)
	} else {
		br = bufio.NewReaderSize(r, max+1)
	}
	return &Reader{br: br, sse: sse, max: max}
}

// Release gives the reader's buffer back for another stream; the reader
// must not be used after it (Next then reports io.ErrClosedPipe).
func (p *Reader) Release() {
	if p.br == nil {
		return
	}
	if p.br.Size() == bufSize {
		p.br.Reset(nil)
		bufs.Put(p.br)
	}
	p.br = nil
}

// Ready reports whether Next would return a frame without reading: the
// buffer holds a whole NDJSON line that is not blank. An SSE event (its
// lines up to the blank one) is not looked for: false only means "not
// known", and costs a write that could have been joined.
func (p *Reader) Ready() bool {
	if p.br == nil || p.sse {
		return false
	}
	buf, _ := p.br.Peek(p.br.Buffered())
	if p.skipLF && len(buf) > 0 && buf[0] == '\n' {
		buf = buf[1:]
	}
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return false
		}
		if len(bytes.TrimSpace(buf[:i])) > 0 {
			return true
		}
		buf = buf[i+1:]
	}
}

// sseSlack lets an SSE line hold a whole event's data after "data: ".
const sseSlack = len("data: ")

// Next returns the next frame that is not blank: an NDJSON line, or the
// data of an SSE event (its data lines joined by LF). The bytes are valid
// until the next call. io.EOF once the stream ended cleanly.
func (p *Reader) Next() ([]byte, error) {
	if p.br == nil {
		return nil, io.ErrClosedPipe
	}
	for {
		line, err := p.readLine()
		if err != nil {
			if err == io.EOF && p.sse && p.hasData {
				return nil, ErrTruncated
			}
			return nil, err
		}
		if !p.started {
			p.started = true
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		obj := line
		if p.sse {
			if obj, err = p.sseLine(line); err != nil {
				return nil, err
			}
		}
		if len(bytes.TrimSpace(obj)) == 0 {
			continue
		}
		return obj, nil
	}
}

// readLine returns the next line without its terminator: LF for NDJSON
// (a CR before it is dropped), and CR, LF or CRLF for SSE. A last line
// without terminator is returned too; then io.EOF.
func (p *Reader) readLine() ([]byte, error) {
	p.line = p.line[:0]
	partial := false
	for {
		if p.br.Buffered() == 0 {
			if _, err := p.br.Peek(1); err != nil {
				if err == io.EOF && partial {
					return p.line, nil
				}
				return nil, err
			}
		}
		buf, _ := p.br.Peek(p.br.Buffered())
		if p.skipLF {
			p.skipLF = false
			if buf[0] == '\n' {
				p.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexByte(buf, '\n')
		if p.sse {
			if j := bytes.IndexByte(buf, '\r'); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		limit := p.max
		if p.sse {
			limit += sseSlack
		}
		if i < 0 {
			if len(p.line)+len(buf) > limit {
				return nil, ErrTooLarge
			}
			p.line = append(p.line, buf...)
			partial = true
			p.br.Discard(len(buf))
			continue
		}
		if len(p.line)+i > limit {
			return nil, ErrTooLarge
		}
		p.line = append(p.line, buf[:i]...)
		if buf[i] == '\r' {
			p.skipLF = true
		}
		p.br.Discard(i + 1)
		if !p.sse {
			p.line = bytes.TrimSuffix(p.line, []byte{'\r'})
		}
		return p.line, nil
	}
}

// sseLine processes one SSE line and returns the data of the event it
// dispatches (nil when it dispatches none). Only data fields matter;
// matter; comments, event, id and retry are ignored.
func (p *Reader) sseLine(line []byte) ([]byte, error) {
	if len(line) == 0 {
		if !p.hasData {
			return nil, nil
		}
		p.hasData = false
		d := p.data[:len(p.data)-1] // the LF after the last data line
		p.data = p.data[:0]
		return d, nil
	}
	if line[0] == ':' {
		return nil, nil
	}
	field, value, _ := bytes.Cut(line, []byte{':'})
	value = bytes.TrimPrefix(value, []byte{' '})
	if string(field) != "data" {
		return nil, nil
	}
	if len(p.data)+len(value)+1 > p.max+1 {
		return nil, ErrTooLarge
	}
	p.data = append(p.data, value...)
	p.data = append(p.data, '\n')
	p.hasData = true
	return nil, nil
}
