// Package toolclienttest holds what the tool call benchmarks share, in this
// module (internal/kernel) and in the bench module (bench/kernel, against
// NATS): one closed-loop tool call through a tool client, and a tool capsule
// that does no I/O. It is imported only from _test.go files.
package toolclienttest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// callDeadline bounds one call, as NATS's request has a deadline: a lost
// result fails the run instead of hanging it.
const callDeadline = 30 * time.Second

// RoundTrip returns one call of tool with args through a tool client of k
// for the default principal, which fails on an is_error result or, when
// want is not empty, on any other content; and the client's close.
func RoundTrip(tb testing.TB, k toolclient.Kernel, tool string, args json.RawMessage, want string) (call func() error, closeClient func()) {
	tb.Helper()
	c, err := toolclient.New(k, ipc.DefaultPrincipal)
	if err != nil {
		tb.Fatal(err)
	}
	call = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
		defer cancel()
		res, err := c.Call(ctx, toolclient.NewCallID(), tool, args)
		if err == nil && (res.IsError || (want != "" && res.Content != want)) {
			err = fmt.Errorf("%s answered %+v", tool, res)
		}
		return err
	}
	return call, c.Close
}

// EchoManifest is a tool capsule that does no I/O: the round trip through
// it is the kernel's own share of a tool call, without the file read.
var EchoManifest = []byte(`
[package]
name = "test-echo"
version = "0.1.0"

[subscribe]
"tool.v1.execute.echo" = { wit = "opaque", handler = "tool_execute_echo" }
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }

[publish]
"tool.v1.execute.echo.result" = "opaque"
"tool.v1.response.describe.test-echo" = "opaque"
`)

// NewEcho is EchoManifest's code: the tool echo answers its text.
func NewEcho() *sdk.Capsule {
	c := sdk.New("says what it is told")
	type echoArgs struct {
		Text string `json:"text"`
	}
	sdk.Tool(c, "echo", "answer text", func(_ *sdk.Call, a echoArgs) (string, error) { return a.Text, nil })
	return c
}

// EchoArgs and EchoWant are the echo call of the benchmarks: a text of the
// size of the read_file benchmark's small file.
var (
	EchoArgs = json.RawMessage(`{"text":"a small file\n"}`)
	EchoWant = "a small file\n"
)
