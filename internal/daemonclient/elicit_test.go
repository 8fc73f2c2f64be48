package daemonclient_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// askerManifest provides "ask_name", whose call asks the person a question
// (hostapi.Elicit) and answers with what they typed.
const askerManifest = `
[package]
name = "asker"
version = "0.1.0"
[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.ask_name" = { wit = "opaque", handler = "tool_execute_ask_name" }
[publish]
"tool.v1.response.describe.asker" = "opaque"
"tool.v1.execute.ask_name.result" = "opaque"
`

func asker() kernel.Builtin {
	return kernel.Builtin{Manifest: []byte(askerManifest), New: func() *sdk.Capsule {
		c := sdk.New("asks the person")
		sdk.Tool(c, "ask_name", "asks a name", func(c *sdk.Call, _ struct{}) (string, error) {
			ans, err := c.Elicit(hostapi.ElicitRequest{Key: "NAME", Kind: hostapi.ElicitText, Prompt: "Your name"})
			if err != nil {
				return "", err
			}
			return "hello " + ans.Value, nil
		})
		return c
	}}
}

func text(s string) *string { return &s }

// A capsule asks a question during a tool call made through the daemon:
// the question reaches the calling client over the socket, its answer
// (relayed by the uplink for the client's principal) reaches the capsule.
func TestElicitAnsweredOverSocket(t *testing.T) {
	d := bootWith(t, owner(), asker())
	c := d.dial(t)
	asked := 0
	res, err := toolclient.CallToolAsking(context.Background(), c, c.Principal(), "ask_name", json.RawMessage(`{}`), testWait, nil,
		func(_ context.Context, q ipc.ElicitRequest) ipc.ElicitResponse {
			asked++
			if q.Field.Key != "NAME" || q.CapsuleID != "asker" {
				t.Errorf("the question over the socket: %+v", q)
			}
			return ipc.ElicitResponse{Value: text("Ada")}
		})
	if err != nil || res.IsError || res.Content != "hello Ada" || asked != 1 {
		t.Fatalf("the call: %+v, %v; asked %d times", res, err, asked)
	}
}

// A question belongs to the principal whose call asked it: a client over
// the socket (default) that learns the id of alice's question and answers
// it is not heard — alice's own answer, given after it, is the one the
// capsule gets — and alice's question never reaches that client.
func TestElicitOfAnotherPrincipalIsNotAnsweredOverSocket(t *testing.T) {
	d := bootWith(t, uplink.Settings{OwnerUID: os.Getuid()}, asker())
	mallory := d.dial(t)
	watch, err := mallory.Subscribe(dispatch.Caller{}, ipc.ElicitRequestTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	asked := make(chan string, 1)
	answer := make(chan struct{})
	type outcome struct {
		res ipc.ToolCallResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := toolclient.CallToolAsking(context.Background(), d.k.Frontend(), "alice", "ask_name", json.RawMessage(`{}`), testWait, nil,
			func(ctx context.Context, q ipc.ElicitRequest) ipc.ElicitResponse {
				asked <- q.RequestID
				select {
				case <-answer:
					return ipc.ElicitResponse{Value: text("alice")}
				case <-ctx.Done():
					return ipc.ElicitResponse{}
				}
			})
		done <- outcome{res, err}
	}()
	id := <-asked
	// Published for default: delivered (synchronously) to no route of
	// alice's, so it cannot be the answer alice's call takes.
	answerTopic := ipc.ElicitResponseTopic(id)
	forged, err := ipc.EncodePayload(ipc.ElicitResponse{RequestID: id, Value: text("mallory")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mallory.Publish(dispatch.Caller{}, answerTopic, forged); err != nil {
		t.Fatalf("publishing an answer is allowed (the uplink's ingress), only not heard: %v", err)
	}
	close(answer)
	got := <-done
	if got.err != nil || got.res.Content != "hello alice" {
		t.Fatalf("alice's call: %+v, %v; want alice's own answer", got.res, got.err)
	}
	// The question went to alice only: it was published before alice
	// answered, so a copy for default's client would have been queued for
	// it by now (a request's round trip behind it, to be sure).
	mallory.Interceptors(ipc.UserPromptTopic)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ev, err := watch.Recv(ctx); err == nil {
		t.Fatalf("alice's question reached default's client: %+v", ev.Envelope)
	}
}
