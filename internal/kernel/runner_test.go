package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// A tool call runs its relay on the caller's goroutine (dispatch.Runner).
// These capsules check the one way that could go wrong: a handler that
// publishes a request and then waits for the answer — with Recv, or by
// polling — while the request's interceptor call was left to the very
// goroutine that is waiting.

var askerManifest = []byte(`
[package]
name = "test-asker"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.ask_recv" = { wit = "opaque", handler = "tool_execute_ask_recv" }
"tool.v1.execute.ask_poll" = { wit = "opaque", handler = "tool_execute_ask_poll" }
"test.v1.answer" = "opaque"

[publish]
"tool.v1.execute.ask_recv.result" = "opaque"
"tool.v1.execute.ask_poll.result" = "opaque"
"tool.v1.response.describe.test-asker" = "opaque"
"test.v1.question" = "opaque"
`)

var answererManifest = []byte(`
[package]
name = "test-answerer"
version = "0.1.0"

[subscribe]
"test.v1.question" = { wit = "opaque", handler = "answer" }

[publish]
"test.v1.answer" = "opaque"
`)

func newAsker() *sdk.Capsule {
	c := sdk.New("asks another capsule and waits for the answer")
	c.Subscribes("test.v1.answer")
	c.Publishes("test.v1.question")
	ask := func(call *sdk.Call, wait func(sub hostapi.SubscriptionID) (string, error)) (string, error) {
		sub, err := call.Subscribe("test.v1.answer")
		if err != nil {
			return "", err
		}
		if err := call.Publish("test.v1.question", []byte(`{"q":"ping"}`)); err != nil {
			return "", err
		}
		return wait(sub)
	}
	sdk.Tool(c, "ask_recv", "asks, then waits with recv", func(call *sdk.Call, _ struct{}) (string, error) {
		return ask(call, func(sub hostapi.SubscriptionID) (string, error) {
			m, err := call.Recv(sub, 10*time.Second)
			if err != nil {
				return "", err
			}
			return string(m.Payload), nil
		})
	})
	sdk.Tool(c, "ask_poll", "asks, then polls", func(call *sdk.Call, _ struct{}) (string, error) {
		return ask(call, func(sub hostapi.SubscriptionID) (string, error) {
			// Polling is what this tool tests, from inside a capsule (no
			// testing.T): the deadline only turns a lost answer into an error.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				m, ok, err := call.Poll(sub)
				if err != nil {
					return "", err
				}
				if ok {
					return string(m.Payload), nil
				}
			}
			return "", fmt.Errorf("no answer while polling")
		})
	})
	return c
}

func newAnswerer() *sdk.Capsule {
	c := sdk.New("answers questions")
	c.Publishes("test.v1.answer")
	c.Handle("test.v1.question", "answer", func(call *sdk.Call) error {
		return call.Publish("test.v1.answer", []byte(`{"a":"pong"}`))
	})
	return c
}

func TestAToolThatWaitsForItsOwnRequestGetsTheAnswer(t *testing.T) {
	k, _ := bootTest(t, append(Builtins(),
		Builtin{Manifest: askerManifest, New: newAsker},
		Builtin{Manifest: answererManifest, New: newAnswerer}))
	for _, tool := range []string{"ask_recv", "ask_poll"} {
		t.Run(tool, func(t *testing.T) {
			res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, tool, json.RawMessage(`{}`), testTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.Content != `{"a":"pong"}` {
				t.Fatalf("result %+v, want the answerer's pong", res)
			}
		})
	}
}

// TestARateLimitedResultStillReachesTheCaller: with a rate limit so tight
// that the router's bucket runs dry within a few calls, every call is still
// answered — the router's result goes out as its failure reply, which the
// limiter charges but never refuses — instead of the caller waiting out its
// timeout for a result the limiter dropped.
func TestARateLimitedResultStillReachesTheCaller(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.RateBytesPerSec = 1 // no refill to speak of
	cfg.Limits.RateBurstBytes = 4096
	k, ws := bootTestConfig(t, nil, cfg)
	if err := os.WriteFile(filepath.Join(ws, "small.txt"), []byte("a small file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := k.NewToolClient(ipc.DefaultPrincipal)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; k.Dispatcher.Stats().RateLimited == 0; i++ {
		if i == 100 {
			t.Fatal("100 calls never hit the rate limit; the test does not test it")
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		res, err := c.Call(ctx, NewCallID(), "read_file", json.RawMessage(`{"file_path":"small.txt"}`))
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if res.IsError {
			if !strings.Contains(res.Content, "rate limited") {
				t.Fatalf("call %d: error result %q, want the real result or a rate-limit error", i, res.Content)
			}
			continue
		}
		if !strings.Contains(res.Content, "a small file") {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
}
