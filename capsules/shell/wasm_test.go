package shell_test

import (
	"testing"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/shell"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// The shell built to wasm and installed as an operator would install it
// (the wasm engine runs it, its ProcessRun and RequestApproval through the
// wasm host) asks about the exact command, runs it once approved, never
// runs a denied one and refuses a deny-listed one without a question, as
// it does natively; the approval capsule lets its calls through.
func TestShellWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	installed := sdktest.WasmCapsule(t, ".", "shell", shell.Manifest)
	k := sdktest.New(t,
		sdktest.Capsule{Manifest: approval.Manifest, New: approval.New, Config: map[string]string{approval.ApproversKey: sdktest.ApproverID}},
		installed,
	)
	qs := k.Approvals(ipc.DefaultPrincipal)

	call, q := ask(t, k, qs, run{Command: "touch ran; printf '%s' \"$((6*7))\""})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
	if res := call.Wait(); res.IsError || res.Content != "42" || !exists(k, "ran") {
		t.Fatalf("approved: %+v", res)
	}
	call, q = ask(t, k, qs, run{Command: "touch denied"})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionDeny)
	if res := call.Wait(); !res.IsError || exists(k, "denied") {
		t.Fatalf("denied: %+v", res)
	}
	if res := k.CallTool("run_shell_command", run{Command: "touch wiped; sudo rm -rf /*"}); !res.IsError || exists(k, "wiped") {
		t.Fatalf("deny list: %+v", res)
	}
	noQuestion(t, qs)
}
