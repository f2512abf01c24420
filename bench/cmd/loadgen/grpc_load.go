package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// A target of kind grpc is called with lf.a2a.v1.A2AService/SendMessage
// over h2c, one client connection per worker (as the HTTP kinds keep one
// connection each), with the message the v1.0 kind sends; the answer must
// be a completed task carrying the text back.

// grpcConn is one worker's connection to a gRPC target.
type grpcConn struct {
	cc  *grpc.ClientConn
	cli a2apb.A2AServiceClient
}

func dialGRPC(rawURL string) (*grpcConn, error) {
	addr := strings.TrimPrefix(strings.TrimPrefix(rawURL, "h2c://"), "http://")
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	return &grpcConn{cc: cc, cli: a2apb.NewA2AServiceClient(cc)}, nil
}

func (c *grpcConn) Close() { c.cc.Close() }

// grpcVersion is the metadata every call carries, as a 1.0 client sends it.
var grpcVersion = metadata.Pairs("a2a-version", "1.0")

// call sends request (w, seq) and checks its answer.
func (c *grpcConn) call(w, seq int, scratch []byte) error {
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), grpcVersion), 30*time.Second)
	defer cancel()
	id := string(appendID(scratch[:0], w, seq))
	text := string(appendText(scratch[:0], w, seq))
	res, err := c.cli.SendMessage(ctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{
		MessageId: "m-" + id, Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}},
	}})
	if err != nil {
		return err
	}
	t := res.GetTask()
	if t == nil || t.GetId() == "" {
		return fmt.Errorf("answer holds no task: %v", res)
	}
	if st := t.GetStatus().GetState(); st != a2apb.TaskState_TASK_STATE_COMPLETED {
		return fmt.Errorf("task state %s, want TASK_STATE_COMPLETED", st)
	}
	var got string
	for _, a := range t.GetArtifacts() {
		for _, p := range a.GetParts() {
			got += p.GetText()
		}
	}
	if got != text {
		return fmt.Errorf("artifact text %q, want %q", got, text)
	}
	return nil
}
