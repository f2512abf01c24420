package interop

import (
	"fmt"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
)

// grpcTarget is the gRPC interface's URL on the cards of the REST mount
// (grpc on): host and port, no scheme. Every SDK's gRPC transport hands the
// card's URL to its gRPC library unchanged, and those take a gRPC target:
// "http://127.0.0.1:9186" fails there ("too many colons in address").
var grpcTarget = fmt.Sprintf("127.0.0.1:%d", restPort)

// TestGRPCCardURL dials the gRPC binding from the URL the card gives, with
// each SDK's own gRPC transport factory and no help: a2a-go v2 from the
// pure 1.0 card (A2A-Version: 1.0, supportedInterfaces), a2a-go v0.3.15
// from the hybrid card (its 0.3 additionalInterfaces, all it reads).
// @a2a-js/sdk's transports run in js/test/grpc.test.js (TestJSGRPC).
func TestGRPCCardURL(t *testing.T) {
	t.Run("a2a-go-v2-1.0-card", func(t *testing.T) {
		ctx, w := testCtx(t), newWire(t)
		card, err := agentcard.DefaultResolver.Resolve(ctx, restURL, agentcard.WithRequestHeader("A2A-Version", "1.0"))
		if err != nil {
			t.Fatalf("resolving the 1.0 card: %v", err)
		}
		var got []string
		for _, in := range card.SupportedInterfaces {
			if in.ProtocolBinding == a2a.TransportProtocolGRPC {
				got = append(got, string(in.ProtocolVersion)+" "+in.URL)
			}
		}
		if want := []string{"1.0 " + grpcTarget, "0.3 " + grpcTarget}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the 1.0 card's GRPC interfaces %q, want %q", got, want)
		}
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2agrpc.WithGRPCTransport(w.grpcOptions()...))
		if err != nil {
			t.Fatalf("a2aclient.NewFromCard (gRPC only): %v (interfaces %v)", err, ifaces(card))
		}
		defer c.Destroy()
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userText("echo " + uniq(t))})
		if err != nil {
			t.Fatalf("SendMessage over gRPC from the 1.0 card: %v", err)
		}
		if task := asTask(t, res); task.Status.State != a2a.TaskStateCompleted {
			t.Errorf("state %s, want %s", task.Status.State, a2a.TaskStateCompleted)
		}
		w.requireDialect(t, "1.0", "SendMessage")
	})

	t.Run("a2a-go-v0.3-hybrid-card", func(t *testing.T) {
		ctx, w := testCtx(t), newWire(t)
		card, err := (&agentcard03.Resolver{Client: w.client()}).Resolve(ctx, restURL)
		if err != nil {
			t.Fatalf("resolving the card with the v0.3 client: %v", err)
		}
		var got []string
		for _, in := range card.AdditionalInterfaces {
			if in.Transport == a2a03.TransportProtocolGRPC {
				got = append(got, in.URL)
			}
		}
		if want := []string{grpcTarget}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the hybrid card's 0.3 GRPC additionalInterfaces %q, want %q", got, want)
		}
		c, err := a2aclient03.NewFromCard(ctx, card,
			a2aclient03.WithDefaultsDisabled(),
			a2aclient03.WithGRPCTransport(w.grpcOptions()...))
		if err != nil {
			t.Fatalf("a2aclient.NewFromCard (v0.3, gRPC only): %v (additional %v)", err, card.AdditionalInterfaces)
		}
		defer c.Destroy()
		res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: text03("echo " + uniq(t))})
		if err != nil {
			t.Fatalf("SendMessage over 0.3 gRPC from the hybrid card: %v", err)
		}
		// The 0.3 gRPC transport leaves configuration.blocking unset, so the
		// send answers the task as it starts; the dial is what is checked.
		if task := asTask03(t, res); task.ID == "" {
			t.Errorf("SendMessage answered a task without an id: %+v", task)
		}
		w.requireDialect(t, "", "SendMessage")
	})
}
