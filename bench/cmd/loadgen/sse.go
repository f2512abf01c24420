package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

// sseReader reads the frames of a text/event-stream body.
type sseReader struct {
	br   *bufio.Reader
	data []byte
}

func newSSEReader(c *conn, resp *response) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(c.bodyReader(resp), 16<<10)}
}

// next returns the data of the next frame (data lines joined by \n);
// comments and other fields are skipped. The slice is valid until the next
// call.
func (s *sseReader) next() ([]byte, error) {
	s.data = s.data[:0]
	have := false
	for {
		line, err := s.br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if have {
				return s.data, nil
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if have {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, bytes.TrimPrefix(v, []byte(" "))...)
			have = true
		}
	}
}

// line returns the next line, whatever it holds, without its line ending.
// The slice is valid until the next call.
func (s *sseReader) line() ([]byte, error) {
	line, err := s.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// streamFrame is the part of a 1.0 StreamResponse the checks read.
type streamFrame struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result struct {
		Task *struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
		StatusUpdate *struct {
			TaskID string `json:"taskId"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"statusUpdate"`
		ArtifactUpdate *struct {
			TaskID    string `json:"taskId"`
			Append    bool   `json:"append"`
			LastChunk bool   `json:"lastChunk"`
			Artifact  struct {
				ArtifactID string `json:"artifactId"`
				Parts      []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"artifact"`
		} `json:"artifactUpdate"`
	} `json:"result"`
}

func decodeFrame(data []byte) (*streamFrame, error) {
	var f streamFrame
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("frame is not JSON (%v): %.200s", err, data)
	}
	if f.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d %s", f.Error.Code, f.Error.Message)
	}
	return &f, nil
}

// rpcRequest builds a 1.0 JSON-RPC POST for rawURL (A2A-Version: 1.0).
func rpcRequest(rawURL, method string, params string, stream bool) ([]byte, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", err
	}
	body := rpcBody(method, params)
	var b []byte
	b = fmt.Appendf(b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n", u.RequestURI(), u.Host)
	if stream {
		b = append(b, "Accept: text/event-stream\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...), u.Host, nil
}

// rpcBody is the JSON-RPC request body of method with params (raw JSON).
func rpcBody(method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params)
}

// getRequest builds a plain GET for rawURL.
func getRequest(rawURL string) ([]byte, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", err
	}
	return fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.RequestURI(), u.Host), u.Host, nil
}

// postRequest builds a JSON POST of body for rawURL.
func postRequest(rawURL, body string) ([]byte, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", err
	}
	b := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, len(body))
	return append(b, body...), u.Host, nil
}
