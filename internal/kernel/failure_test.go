package kernel

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

var troubleManifest = []byte(`
[package]
name = "trouble"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.spin" = { wit = "opaque", handler = "tool_execute_spin" }
"tool.v1.execute.boom" = { wit = "opaque", handler = "tool_execute_boom" }

[publish]
"tool.v1.response.describe.trouble" = "opaque"
"tool.v1.execute.spin.result" = "opaque"
"tool.v1.execute.boom.result" = "opaque"
`)

func newTrouble() *sdk.Capsule {
	c := sdk.New("misbehaves")
	// spin works until the host refuses it: after its deadline or a cancel.
	sdk.Tool(c, "spin", "runs until stopped", func(call *sdk.Call, _ struct{}) (string, error) {
		for {
			if _, _, err := call.KVGet("x"); err != nil {
				return "", err
			}
		}
	})
	sdk.Tool(c, "boom", "panics", func(*sdk.Call, struct{}) (string, error) {
		panic("boom")
	})
	return c
}

func bootTrouble(t *testing.T, deadline time.Duration) *Kernel {
	t.Helper()
	cfg := config.Default()
	cfg.CallDeadline.Duration = deadline
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: cfg, Logger: logger,
		Builtins: append(Builtins(), Builtin{Manifest: troubleManifest, New: newTrouble}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

func TestAPanickingToolStillAnswers(t *testing.T) {
	k := bootTrouble(t, time.Minute)
	res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "boom", nil, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content, "tool boom failed") {
		t.Errorf("result: %+v", res)
	}
	// The capsule keeps working.
	if res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "read_file", json.RawMessage(`{"file_path":"nope"}`), testTimeout); err != nil || !res.IsError {
		t.Errorf("after a panic: %v %+v", err, res)
	}
}

func TestAToolPastItsDeadlineAnswersWithAnError(t *testing.T) {
	k := bootTrouble(t, 200*time.Millisecond)
	res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "spin", nil, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content, "tool spin failed") {
		t.Errorf("result: %+v", res)
	}
}

func TestCancelRequestInterruptsANativeCall(t *testing.T) {
	k := bootTrouble(t, time.Hour)
	const callID = "call_to_cancel"
	done := make(chan struct{})
	var res ipc.ToolCallResult
	var callErr error
	go func() {
		defer close(done)
		res, callErr = k.CallToolWithID(context.Background(), ipc.DefaultPrincipal, callID, "spin", nil, testTimeout)
	}()
	// Publish the cancel as an orchestrator would, until the call has been
	// interrupted (the first may come before the call holds its key).
	caller := dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal}
	cancelMsg, _ := ipc.EncodePayload(ipc.ToolCancelRequest{CallIDs: []string{callID}})
	for {
		if _, err := k.Dispatcher.Publish(caller, ipc.ToolRequestCancelTopic, cancelMsg); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
			if callErr != nil {
				t.Fatal(callErr)
			}
			if !res.IsError || !strings.Contains(res.Content, "tool spin failed") {
				t.Errorf("result: %+v", res)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
