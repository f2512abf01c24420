// Command upstream is the tiny HTTP agent every benchmark target sits in
// front of: Caddy's reverse_proxy (the ceiling) and the a2a module both call
// it, so the difference between them is what the module costs.
//
// It speaks HTTP/1.1 and HTTP/2 cleartext (prior knowledge), so a proxy
// can hold thousands of streams to it on a few connections. Routes (all
// answer any method):
//
//	/echo    the agent contract's plain answer: the request's "input" string
//	         as a text/plain 200 body (the module makes it the artifact).
//	/auth    a plain answer with A2A-Task-State: auth-required, so the task
//	         stays interrupted and its streams stay open (idle-stream test).
//	/ndjson/<n>/<pause>
//	         an NDJSON event stream of n {"text":"<unix ns>"} chunks with a
//	         pause (a Go duration) between them; 0s writes them as fast as
//	         the connection takes them. The timestamp is taken just before
//	         the chunk is written, so a reader can measure relay latency.
//	/openai/<n>/<pause>/v1/chat/completions
//	         an OpenAI-compatible chat completions stream (SSE): n chunks
//	         whose delta content is the unix ns they were written at, paced
//	         as /ndjson, then the finish_reason chunk and [DONE]: the model
//	         server of the openai upstream's relay test.
//	/hold/<max>
//	         a text/event-stream that is one SSE comment, ": hold", flushed,
//	         then held open until the client goes or max (a Go duration)
//	         has passed: what Caddy's reverse_proxy holds as the baseline of
//	         the idle-stream test.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", echo)
	mux.HandleFunc("/auth", auth)
	mux.HandleFunc("/ndjson/{n}/{every}", ndjson)
	mux.HandleFunc("/hold/{max}", hold)
	mux.HandleFunc("/openai/{n}/{every}/v1/chat/completions", chatStream)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("upstream listening on %s", ln.Addr())
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	log.Fatal((&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, Protocols: &protos}).Serve(ln))
}

// contract is the part of the module's request this agent reads.
type contract struct {
	Input json.RawMessage `json:"input"`
}

// inputText returns the request's input: the string itself when it is a
// JSON string (all-text messages), else the raw JSON.
func inputText(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var c contract
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	var s string
	if json.Unmarshal(c.Input, &s) == nil {
		return []byte(s), nil
	}
	return c.Input, nil
}

func echo(w http.ResponseWriter, r *http.Request) {
	text, err := inputText(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(text)))
	_, _ = w.Write(text)
}

func auth(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("A2A-Task-State", "auth-required")
	_, _ = io.WriteString(w, "please sign in")
}

func ndjson(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	n, err := strconv.Atoi(r.PathValue("n"))
	every, err2 := time.ParseDuration(r.PathValue("every"))
	if err != nil || err2 != nil || n <= 0 || every < 0 {
		http.Error(w, "want /ndjson/<chunks>/<pause>", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(w, 32<<10)
	line := make([]byte, 0, 64)
	for i := 0; i < n; i++ {
		if i > 0 && every > 0 {
			time.Sleep(every)
		}
		line = append(line[:0], `{"text":"`...)
		line = strconv.AppendInt(line, time.Now().UnixNano(), 10)
		line = append(line, "\"}\n"...)
		if _, err := bw.Write(line); err != nil {
			return
		}
		// Paced chunks go out one by one (the latency test); a burst is
		// left to the buffer so the reader, not this writer, is the limit.
		if every > 0 {
			if bw.Flush() != nil || rc.Flush() != nil {
				return
			}
		}
	}
	_ = bw.Flush()
}

// chatStream is /openai/<n>/<pause>/v1/chat/completions: timestamps as a
// chat completions stream.
func chatStream(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	n, err := strconv.Atoi(r.PathValue("n"))
	every, err2 := time.ParseDuration(r.PathValue("every"))
	if err != nil || err2 != nil || n <= 0 || every < 0 {
		http.Error(w, "want /openai/<chunks>/<pause>/v1/chat/completions", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	line := make([]byte, 0, 256)
	for i := 0; i < n; i++ {
		if i > 0 && every > 0 {
			time.Sleep(every)
		}
		line = append(line[:0], `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{"content":"`...)
		line = strconv.AppendInt(line, time.Now().UnixNano(), 10)
		line = append(line, "\"},\"finish_reason\":null}]}\n\n"...)
		if _, err := w.Write(line); err != nil || rc.Flush() != nil {
			return
		}
	}
	_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
}
