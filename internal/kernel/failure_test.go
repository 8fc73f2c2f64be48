package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/ledger"
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
	return bootTroubleWith(t, cfg)
}

func bootTroubleWith(t *testing.T, cfg config.Config, l ...*ledger.Ledger) *Kernel {
	t.Helper()
	var led *ledger.Ledger
	if len(l) > 0 {
		led = l[0]
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: cfg, Logger: logger, Ledger: led, Frontends: testFrontends(),
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

// publishCancel publishes the kernel's own cancel request for principal's
// calls holding keys, as a capsule that owns a convention (the router)
// would.
func publishCancel(t *testing.T, k *Kernel, principal string, keys ...string) {
	t.Helper()
	p, err := ipc.CancelRequest{CorrelationIDs: keys}.MarshalJSON()
	if err == nil {
		_, err = k.Dispatcher.Publish(dispatch.Caller{Principal: principal}, ipc.CancelRequestTopic, p, dispatch.KernelEvent)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The tool convention's cancel, as an orchestrator publishes it, reaches
// the call through the router, which passes it on as the kernel's.
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
			// The result says the call was cancelled, not that
			// the capsule trapped.
			if !res.IsError || !strings.HasPrefix(res.Content, "tool spin was cancelled before it answered") {
				t.Errorf("result: %+v", res)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Native calls are charged to the invoking principal's CPU budget like wasm
// calls. A call that takes the principal over its budget still gets its
// answer (here spin's failure reply, relayed by the router for the same
// principal): the budget never refuses work on its way back. Once over it,
// the principal's next tool call is refused when it starts, at once and
// with the reason, not left to time out. Another principal is not affected.
func TestNativeCallsAreChargedToThePrincipalsCPUBudget(t *testing.T) {
	cfg := config.Default()
	cfg.CallDeadline.Duration = 300 * time.Millisecond
	// The ledger's clock stands still, so the budget window never resets
	// during the test however slowly it runs.
	frozen := time.Now()
	k := bootTroubleWith(t, cfg, ledger.NewWithClock(50*time.Millisecond, func() time.Time { return frozen }))
	// spin burns CPU until its deadline, far more than 50 ms.
	res, err := k.CallTool(context.Background(), "alice", "spin", nil, testTimeout)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "tool spin failed") {
		t.Fatalf("the call that went over budget: %v %+v, want its failure reply", err, res)
	}
	if cpu := k.Ledger.Usage("alice").CPU; cpu < 100*time.Millisecond {
		t.Fatalf("alice charged %s for ~300 ms of spinning", cpu)
	}
	// Over budget for the rest of the window: alice's next call is refused
	// as it starts, with the ledger's reason.
	_, err = k.CallTool(context.Background(), "alice", "read_file", json.RawMessage(`{"file_path":"x"}`), testTimeout)
	var ob *ledger.OverBudgetError
	if !errors.As(err, &ob) || !errors.Is(err, dispatch.ErrNotAdmitted) || ob.Principal != "alice" {
		t.Fatalf("over budget: %v, want a refusal naming alice's CPU budget", err)
	}
	if k.Ledger.Usage("alice").Refused == 0 || k.Dispatcher.Stats().NotAdmitted == 0 {
		t.Error("the refusal was not counted")
	}
	// bob is not affected.
	if res, err := k.CallTool(context.Background(), "bob", "read_file", json.RawMessage(`{"file_path":"x"}`), testTimeout); err != nil || !res.IsError || !strings.Contains(res.Content, "does not exist") {
		t.Errorf("bob: %v %+v", err, res)
	}
	if k.Ledger.Usage("bob").CPU <= 0 {
		t.Error("bob's calls were not charged")
	}
}
