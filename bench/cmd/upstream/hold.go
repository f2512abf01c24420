package main

import (
	"io"
	"net/http"
	"time"
)

// hold answers one SSE comment and holds the stream open until the client
// goes or the path's max duration has passed. It is the upstream end of the
// idle-stream baseline, so it parks on the request's context and one timer,
// with nothing else per stream.
func hold(w http.ResponseWriter, r *http.Request) {
	limit, err := time.ParseDuration(r.PathValue("max"))
	if err != nil || limit <= 0 {
		http.Error(w, "want /hold/<max duration>", http.StatusNotFound)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(w, ": hold\n\n"); err != nil {
		return
	}
	if http.NewResponseController(w).Flush() != nil {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-t.C:
	}
}
