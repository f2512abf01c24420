package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"strconv"
	"time"
)

// conn is a bare HTTP/1.1 keep-alive client connection. The generator
// shares two cores with the servers it measures, so it writes pre-built
// request bytes and parses only what it checks, instead of paying for
// net/http's client on every request.
type conn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
	body []byte
	// bodyLen is the Content-Length of the response being read, -1 when
	// the body is chunked or runs to EOF.
	bodyLen int
}

// response is the part of an HTTP response the generator checks. Body is
// only valid until the next call on the conn.
type response struct {
	Status      int
	ContentType string
	Chunked     bool
	Close       bool
	Body        []byte
}

func dial(addr string) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{addr: addr, c: c, br: bufio.NewReaderSize(c, 16<<10)}, nil
}

func (c *conn) Close() error { return c.c.Close() }

// roundTrip writes req (a complete HTTP/1.1 request) and reads the whole
// response.
func (c *conn) roundTrip(req []byte) (response, error) {
	if _, err := c.c.Write(req); err != nil {
		return response{}, err
	}
	resp, err := c.readHead()
	if err != nil {
		return resp, err
	}
	resp.Body, err = c.readBody(&resp)
	return resp, err
}

// send writes a request whose answer is read with readHead and then read
// as a stream.
func (c *conn) send(req []byte) error {
	_, err := c.c.Write(req)
	return err
}

var errMalformed = errors.New("malformed HTTP response")

// readHead reads the status line and headers; it returns with the body
// unread.
func (c *conn) readHead() (response, error) {
	var r response
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return r, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return r, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	r.Status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return r, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	contentLength := -1
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return r, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return r, fmt.Errorf("%w: header %q", errMalformed, line)
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if contentLength, err = strconv.Atoi(string(v)); err != nil {
				return r, fmt.Errorf("%w: content-length %q", errMalformed, v)
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			r.Chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Content-Type")):
			r.ContentType = string(v)
		case bytes.EqualFold(k, []byte("Connection")):
			r.Close = bytes.EqualFold(v, []byte("close"))
		}
	}
	if !r.Chunked {
		if contentLength < 0 {
			// Neither length nor chunking: the body runs to EOF; such a
			// connection cannot be reused.
			r.Close = true
		}
	}
	c.bodyLen = contentLength
	if r.Chunked {
		c.bodyLen = -1
	}
	return r, nil
}

// bodyReader returns a reader of the body whose head was just read.
func (c *conn) bodyReader(r *response) io.Reader {
	switch {
	case r.Chunked:
		return httputil.NewChunkedReader(c.br)
	case c.bodyLen >= 0:
		return io.LimitReader(c.br, int64(c.bodyLen))
	default:
		return c.br
	}
}

// readBody reads the whole body into the conn's reusable buffer.
func (c *conn) readBody(r *response) ([]byte, error) {
	if !r.Chunked && c.bodyLen >= 0 {
		if cap(c.body) < c.bodyLen {
			c.body = make([]byte, c.bodyLen)
		}
		c.body = c.body[:c.bodyLen]
		_, err := io.ReadFull(c.br, c.body)
		return c.body, err
	}
	buf := bytes.NewBuffer(c.body[:0])
	_, err := buf.ReadFrom(c.bodyReader(r))
	c.body = buf.Bytes()
	if err == nil && r.Chunked {
		err = c.skipTrailer()
	}
	return c.body, err
}

// skipTrailer reads what follows the last chunk of a chunked body: trailer
// fields, if any, and the empty line that ends them. The chunked reader
// stops before them, and the next response starts after.
func (c *conn) skipTrailer() error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}
