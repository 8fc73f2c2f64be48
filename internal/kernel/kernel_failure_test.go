package kernel

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// TestRouterTakesOnlyAKernelFailure: the kernel answers a call whose host
// was lost on the tool's result topic (natsbus, nats_lost.go); the router
// accepts that for a call it forwarded, but only as a failure: a
// kernel-sourced success is refused, and the call stays pending.
func TestRouterTakesOnlyAKernelFailure(t *testing.T) {
	k, ws := bootTest(t, Builtins())
	pipe := filepath.Join(ws, "pipe") // read_file waits on it (see TestForgedResultsAreNotAccepted)
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	writer, err := os.OpenFile(pipe, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close() // a second Close only errs
	const callID = "call_lost_host"
	type outcome struct {
		res ipc.ToolCallResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := k.CallToolWithID(context.Background(), ipc.DefaultPrincipal, callID, "read_file", json.RawMessage(`{"file_path":"pipe"}`), testTimeout)
		done <- outcome{res, err}
	}()
	routerKV := k.Store.KV(ipc.DefaultPrincipal, "astrid-capsule-router")
	pending := func() bool { _, ok, _ := routerKV.Get("~pending/" + callID); return ok }
	testutil.WaitFor(t, testTimeout, "the call to become pending", pending)

	publish := func(isError bool, content string) {
		t.Helper()
		payload, _ := ipc.ToolExecuteResult{CallID: callID, Result: ipc.ToolCallResult{CallID: callID, Content: content, IsError: isError}}.MarshalJSON()
		if isError {
			// The kernel's failure is a request_failed answer.
			payload, _ = ipc.RequestFailed{CorrelationID: callID, Reason: ipc.FailHostLost, Message: content}.MarshalJSON()
		}
		if _, err := k.Dispatcher.Publish(dispatch.Caller{Principal: ipc.DefaultPrincipal}, ipc.ToolResultTopic("read_file"), payload, dispatch.KernelEvent); err != nil {
			t.Fatal(err)
		}
	}
	before := k.Dispatcher.Stats().Denials
	publish(false, "a success the kernel may not give")
	testutil.WaitFor(t, testTimeout, "the router to refuse the kernel's success", func() bool { return k.Dispatcher.Stats().Denials > before })
	if !pending() {
		t.Fatal("a kernel-sourced success ended the call")
	}
	publish(true, "host gone")
	testutil.WaitFor(t, testTimeout, "the router to take the kernel's failure", func() bool { return !pending() })
	// The caller's own goroutine runs read_file (toolclient's runner):
	// let it finish. Its late result finds no pending call.
	_, _ = writer.WriteString("the real content")
	writer.Close()
	got := <-done
	if got.err != nil || !got.res.IsError || !strings.Contains(got.res.Content, "host gone") {
		t.Fatalf("the call ended with %+v %v, want the kernel's failure", got.res, got.err)
	}
}
