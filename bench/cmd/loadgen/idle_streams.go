package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// firstFrameTimeout bounds how long opening one stream may take, from the
// request to its first frame; an idle stream that never starts is an error,
// not a hang.
const firstFrameTimeout = 30 * time.Second

// streamOpener opens the idle streams of one protocol. Stream i is opened
// by open(i, …); the opener decides which connection carries it.
type streamOpener interface {
	// open sends SubscribeToTask for task id and returns once the stream's
	// first frame has arrived and passed the opener's check. The stream
	// stays open until the returned Closer is closed.
	open(i int, id string) (io.Closer, *sseReader, error)
	// conns is how many connections the opener has dialed so far.
	conns() int
	// close drops whatever connections are left once every stream is
	// closed.
	close()
}

// newOpener returns the opener of a protocol: "h1" (HTTP/1.1, one
// connection per stream) or "h2c" (HTTP/2 over cleartext, perConn streams
// per connection). Its streams POST to rpc, and check reads and checks
// each one's first frame.
func newOpener(proto, rpc string, perConn int, check func(*sseReader) error) (streamOpener, error) {
	switch proto {
	case "h1":
		return &h1Opener{rpc: rpc, check: check}, nil
	case "h2c":
		if perConn <= 0 {
			return nil, fmt.Errorf("h2c: %d streams per connection", perConn)
		}
		return &h2cOpener{rpc: rpc, check: check, perConn: perConn, timeout: firstFrameTimeout}, nil
	}
	return nil, fmt.Errorf("protocol %q: want h1 or h2c", proto)
}

// h1Opener opens each stream on its own HTTP/1.1 connection with the bare
// client: one stream is one connection, as most SSE clients do it.
type h1Opener struct {
	rpc   string
	check func(*sseReader) error
	dials atomic.Int64
}

func (o *h1Opener) open(_ int, id string) (io.Closer, *sseReader, error) {
	req, addr, err := rpcRequest(o.rpc, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, id), true)
	if err != nil {
		return nil, nil, err
	}
	c, err := dial(addr)
	if err != nil {
		return nil, nil, err
	}
	o.dials.Add(1)
	sr, err := func() (*sseReader, error) {
		if err := c.c.SetDeadline(time.Now().Add(firstFrameTimeout)); err != nil {
			return nil, err
		}
		if err := c.send(req); err != nil {
			return nil, err
		}
		resp, err := c.readHead()
		if err != nil {
			return nil, err
		}
		if resp.Status != 200 {
			return nil, fmt.Errorf("HTTP %d", resp.Status)
		}
		sr := newSSEReader(c, &resp)
		if err := o.check(sr); err != nil {
			return nil, err
		}
		// From here on the stream idles as long as the server keeps it.
		return sr, c.c.SetDeadline(time.Time{})
	}()
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, sr, nil
}

func (o *h1Opener) conns() int { return int(o.dials.Load()) }

func (o *h1Opener) close() {}

// h2cOpener multiplexes the streams over HTTP/2 cleartext connections
// (prior knowledge, no upgrade) with net/http's own HTTP/2. Stream i goes
// to connection i/perConn, so n streams use exactly ceil(n/perConn)
// connections whatever the order they are opened in: each connection is a
// Transport of its own, allowed one connection, and told to wait for a free
// stream slot rather than open another connection.
type h2cOpener struct {
	rpc     string
	check   func(*sseReader) error
	perConn int
	timeout time.Duration

	mu    sync.Mutex
	ts    []*http.Transport
	dials atomic.Int64
}

// transport returns the Transport of connection k, making it on first use.
func (o *h2cOpener) transport(k int) *http.Transport {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.ts) <= k {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		d := &net.Dialer{Timeout: 5 * time.Second}
		o.ts = append(o.ts, &http.Transport{
			Protocols: &p,
			HTTP2:     &http.HTTP2Config{StrictMaxConcurrentRequests: true},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := d.DialContext(ctx, network, addr)
				if err == nil {
					o.dials.Add(1)
				}
				return c, err
			},
			MaxConnsPerHost:    1,
			DisableCompression: true,
		})
	}
	return o.ts[k]
}

func (o *h2cOpener) open(i int, id string) (io.Closer, *sseReader, error) {
	ctx, cancel := context.WithCancel(context.Background())
	// Cancelling the request's context would end the stream, so the bound
	// on its start is a timer that is stopped once the first frame is in.
	timer := time.AfterFunc(o.timeout, cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.rpc,
		strings.NewReader(rpcBody("SubscribeToTask", fmt.Sprintf(`{"id":%q}`, id))))
	if err != nil {
		cancel()
		return nil, nil, err
	}
	// Without GetBody the Transport cannot replay the request, so a stream
	// the server refuses (REFUSED_STREAM, GOAWAY) is an error here instead
	// of being retried out of sight.
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := o.transport(i / o.perConn).RoundTrip(req)
	if err != nil {
		if !timer.Stop() {
			err = fmt.Errorf("no answer within %s: %w", o.timeout, err)
		}
		cancel()
		return nil, nil, err
	}
	stream := closerFunc(func() error {
		cancel()
		return resp.Body.Close()
	})
	sr, err := func() (*sseReader, error) {
		if resp.ProtoMajor != 2 {
			return nil, fmt.Errorf("answered over %s, not HTTP/2", resp.Proto)
		}
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		sr := &sseReader{br: bufio.NewReaderSize(resp.Body, 16<<10)}
		if err := o.check(sr); err != nil {
			return nil, err
		}
		if !timer.Stop() {
			return nil, errors.New("the stream was cancelled")
		}
		return sr, nil
	}()
	if err != nil {
		if !timer.Stop() {
			err = fmt.Errorf("no first frame within %s: %w", o.timeout, err)
		}
		stream.Close()
		return nil, nil, err
	}
	return stream, sr, nil
}

func (o *h2cOpener) conns() int { return int(o.dials.Load()) }

func (o *h2cOpener) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, t := range o.ts {
		t.CloseIdleConnections()
	}
}

// closerFunc is a func as an io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// checkFirstFrame reads a SubscribeToTask stream's first frame, which must
// be the auth-required task the stream was opened on (kind a2a).
func checkFirstFrame(sr *sseReader) error {
	data, err := sr.next()
	if err != nil {
		return err
	}
	f, err := decodeFrame(data)
	if err != nil {
		return err
	}
	if f.Result.Task == nil || f.Result.Task.Status.State != "TASK_STATE_AUTH_REQUIRED" {
		return fmt.Errorf("first frame is not the auth-required task: %.200s", data)
	}
	return nil
}

// checkHoldComment reads a hold stream's first line, which must be
// holdComment (kind hold).
func checkHoldComment(sr *sseReader) error {
	line, err := sr.line()
	if err != nil {
		return err
	}
	if string(line) != holdComment {
		return fmt.Errorf("first line is not %q: %.200q", holdComment, line)
	}
	return nil
}

// openStreams opens one stream per id through o, par at a time; stream
// first+k carries ids[k]. It returns once every stream has delivered its
// first frame. A goroutine per stream then keeps reading so a stream the
// server ends (closed, reset) is counted in closed.
func openStreams(o streamOpener, first int, ids []string, par int, closed *atomic.Int64) ([]io.Closer, error) {
	out := make([]io.Closer, len(ids))
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(ids) {
					return
				}
				s, sr, err := o.open(first+k, ids[k])
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("stream %d: %w", first+k+1, err)
					}
					mu.Unlock()
					return
				}
				out[k] = s
				go func() {
					for {
						if _, err := sr.next(); err != nil {
							closed.Add(1)
							return
						}
					}
				}()
			}
		}()
	}
	wg.Wait()
	out = slices.DeleteFunc(out, func(s io.Closer) bool { return s == nil })
	return out, firstErr
}
