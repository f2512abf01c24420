// Command grpcup is the tiny gRPC agent behind Caddy's reverse_proxy in the
// gRPC benchmark: lf.a2a.v1.A2AService's SendMessage answering a completed
// task whose one artifact is the message's text, the answer the a2a
// module gives over gRPC in front of the HTTP upstream's /echo. It serves
// h2c (prior knowledge), as reverse_proxy's h2c transport calls it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"sync/atomic"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
)

type server struct {
	a2apb.UnimplementedA2AServiceServer
	n atomic.Int64
}

func (s *server) SendMessage(_ context.Context, req *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	var text string
	for _, p := range req.GetMessage().GetParts() {
		text += p.GetText()
	}
	id := fmt.Sprint("t-", s.n.Add(1))
	return &a2apb.SendMessageResponse{Payload: &a2apb.SendMessageResponse_Task{Task: &a2apb.Task{
		Id:        id,
		ContextId: "c-" + id,
		Status:    &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_COMPLETED},
		Artifacts: []*a2apb.Artifact{{ArtifactId: "a-" + id, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}}},
	}}}, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("grpcup listening on %s", ln.Addr())
	s := grpc.NewServer()
	a2apb.RegisterA2AServiceServer(s, &server{})
	log.Fatal(s.Serve(ln))
}
