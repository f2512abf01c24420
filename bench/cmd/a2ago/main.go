// Command a2ago is the a2a-go v2 peer of the benchmark: an echo agent on the
// SDK's own JSON-RPC transport and in-memory task store, doing what the
// caddy-a2a target does for the same request — a task whose one artifact is
// the text it was sent, completed — so the two can be compared.
package main

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// echoExecutor publishes the task, the echoed text as an artifact and the
// completed status: the same three steps the module's runner takes.
type echoExecutor struct{}

func (echoExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		var text strings.Builder
		for _, p := range ec.Message.Parts {
			text.WriteString(p.Text())
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart(text.String())), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (echoExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	pprofAddr := flag.String("pprof", "", "if set, serve net/http/pprof on this address (to see where the SDK spends its time)")
	flag.Parse()
	if *pprofAddr != "" {
		dbg := http.NewServeMux()
		dbg.HandleFunc("/debug/pprof/", pprof.Index)
		dbg.HandleFunc("/debug/pprof/profile", pprof.Profile)
		go func() { log.Print(http.ListenAndServe(*pprofAddr, dbg)) }()
	}
	// The SDK logs through slog.Default; keep it to warnings, as Caddy is.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	card := &a2a.AgentCard{
		Name:        "Bench",
		Description: "a2a-go echo agent for the caddy-a2a benchmark",
		Version:     "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(fmt.Sprintf("http://%s/a2a", ln.Addr()), a2a.TransportProtocolJSONRPC),
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		Skills:             []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Echo", Tags: []string{"echo"}}},
	}
	mux := http.NewServeMux()
	mux.Handle("/a2a", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echoExecutor{})))
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	log.Printf("a2a-go echo server listening on %s", ln.Addr())
	log.Fatal((&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln))
}
