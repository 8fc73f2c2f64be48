package kernel

import (
	"context"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The approval layer built to wasm, in front of the native router and file
// tools: a read-only call passes unasked, a mutable one is asked about and
// runs once approved, is refused when denied, and lapses unanswered, as it
// does natively (capsules/approval's tests).
func TestApprovalLayerWasm(t *testing.T) {
	const approver = "test-approver"
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: config.Default(), Logger: logger, Builtins: Builtins(),
		Frontends: append(testFrontends(), dispatch.CapsuleACL{ID: approver,
			Publish: []string{ipc.ApprovalResponseTopic("*")}, Subscribe: []string{ipc.ApprovalRequestTopic}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	for key, v := range map[string]string{approval.ApproversKey: approver, approval.TimeoutKey: "0.05"} {
		if err := k.Store.Config(approval.ID).Set(key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	loadAsWasm(t, k, newWasmRuntime(t, k), "../../capsules/approval", approval.Manifest)
	if c, ok := k.Registry.Get(approval.ID); !ok || len(c.Engines()) != 1 || c.Engines()[0] != "wasm" {
		t.Fatalf("%s is not loaded through the wasm engine (%v)", approval.ID, ok)
	}
	questions, err := k.Dispatcher.Subscribe(dispatch.Caller{Capsule: approver, Principal: ipc.DefaultPrincipal}, ipc.ApprovalRequestTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	defer questions.Close()

	type outcome struct {
		res ipc.ToolCallResult
		err error
	}
	start := func(name, args string) <-chan outcome {
		done := make(chan outcome, 1)
		go func() {
			res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, name, []byte(args), testTimeout)
			done <- outcome{res, err}
		}()
		return done
	}
	next := func() ipc.ApprovalRequired {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		d, err := questions.Recv(ctx)
		if err != nil {
			t.Fatalf("no question: %v", err)
		}
		var q ipc.ApprovalRequired
		if err := q.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil {
			t.Fatal(err)
		}
		return q
	}
	answer := func(id, decision string) {
		t.Helper()
		p, _ := ipc.ApprovalResponse{RequestID: id, Decision: decision}.MarshalJSON()
		if _, err := k.Dispatcher.Publish(dispatch.Caller{Capsule: approver, Principal: ipc.DefaultPrincipal}, ipc.ApprovalResponseTopic(id), p); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(done <-chan outcome) ipc.ToolCallResult {
		t.Helper()
		o := <-done
		if o.err != nil {
			t.Fatal(o.err)
		}
		return o.res
	}

	if res := wait(start("list_directory", `{"dir_path":"."}`)); res.IsError {
		t.Fatalf("read-only call: %+v", res)
	}
	if d, ok := questions.TryRecv(); ok {
		t.Fatalf("a read-only call was asked about: %s", d.Envelope.Payload)
	}

	call := start("write_file", `{"file_path":"w.txt","content":"approved"}`)
	q := next()
	if q.Action != "write_file" || q.Resource != `{"content":"approved","file_path":"w.txt"}` {
		t.Fatalf("question %+v", q)
	}
	answer(q.RequestID, ipc.DecisionApprove)
	if res := wait(call); res.IsError {
		t.Fatalf("approved call: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "w.txt")); err != nil || string(b) != "approved" {
		t.Fatalf("w.txt: %q (%v)", b, err)
	}

	call = start("write_file", `{"file_path":"d.txt","content":"denied"}`)
	answer(next().RequestID, ipc.DecisionDeny)
	if res := wait(call); !res.IsError || res.Content != "write_file was not approved by the user" {
		t.Fatalf("denied call: %+v", res)
	}

	call = start("write_file", `{"file_path":"t.txt","content":"lapsed"}`)
	next()
	var res ipc.ToolCallResult
	for waiting := true; waiting; {
		select {
		case o := <-call:
			if o.err != nil {
				t.Fatal(o.err)
			}
			res, waiting = o.res, false
		default:
			if _, err := k.Dispatcher.Publish(dispatch.Caller{Principal: ipc.DefaultPrincipal}, ipc.WatchdogTickTopic, []byte(`{}`), dispatch.KernelEvent); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !res.IsError || res.Content != "write_file was not approved by the user: no answer within 0.05 s" {
		t.Fatalf("unanswered call: %+v", res)
	}
	for _, name := range []string{"d.txt", "t.txt"} {
		if _, err := os.Stat(filepath.Join(ws, name)); !os.IsNotExist(err) {
			t.Fatalf("%s was written (%v)", name, err)
		}
	}
	// The wasm approval capsule recorded each question and its answer
	// through the audit_record import.
	var got []string
	if err := audit.Show(config.Layout(k.opts.Home).Audit, audit.Filter{Principals: []string{ipc.DefaultPrincipal}}, func(r audit.Record) error {
		if e := r.Entry; strings.HasPrefix(string(e.Kind), "approval.") {
			got = append(got, string(e.Kind)+":"+e.Subject+":"+e.Outcome+":"+e.Detail["recorded_by"])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"approval.asked:write_file::astrid-capsule-approval", "approval.answered:write_file:approve:astrid-capsule-approval",
		"approval.asked:write_file::astrid-capsule-approval", "approval.answered:write_file:deny:astrid-capsule-approval",
		"approval.asked:write_file::astrid-capsule-approval", "approval.answered:write_file:lapsed:astrid-capsule-approval",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("audit entries of the approval layer:\n%q\nwant\n%q", got, want)
	}
}

// approvalAskerManifest is a tool that asks the person itself, through the host
// approval call, about the exact command it was given.
const approvalAskerManifest = `
[package]
name = "test-asker"
version = "0.1.0"
astrid-version = "^0.1"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.ask" = { wit = "tool-execute-request", handler = "tool_execute_ask" }

[publish]
"tool.v1.response.describe.test-asker" = "opaque"
"tool.v1.execute.ask.result" = "tool-execute-result"
`

func newApprovalAsker() *sdk.Capsule {
	c := sdk.New("Asks before it runs a command")
	sdk.Tool(c, "ask", "Asks about a command", func(c *sdk.Call, a struct {
		Command string `json:"command"`
	}) (string, error) {
		ok, err := c.RequestApproval("run_shell_command", a.Command)
		switch {
		case err != nil:
			return "", err
		case ok:
			return "approved", nil
		}
		return "denied", nil
	})
	return c
}

// The kernel wires the host approval call: the question goes out as the
// kernel, for the call's principal, naming the tool call; a frontend's
// approve_always answers the same exact command at once afterwards, and
// a different command is asked again.
func TestHostApprovalCallThroughTheKernel(t *testing.T) {
	const approver = "test-approver"
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: config.Default(), Logger: logger,
		Builtins: append(Builtins(), Builtin{Manifest: []byte(approvalAskerManifest), New: newApprovalAsker}),
		Frontends: append(testFrontends(), dispatch.CapsuleACL{ID: approver,
			Publish: []string{ipc.ApprovalResponseTopic("*")}, Subscribe: []string{ipc.ApprovalRequestTopic}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	frontend := dispatch.Caller{Capsule: approver, Principal: ipc.DefaultPrincipal}
	questions, err := k.Dispatcher.Subscribe(frontend, ipc.ApprovalRequestTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	defer questions.Close()
	call := func(callID, command, decision, want string) {
		t.Helper()
		done := make(chan ipc.ToolCallResult, 1)
		go func() {
			res, err := k.CallToolWithID(context.Background(), ipc.DefaultPrincipal, callID, "ask", []byte(`{"command":"`+command+`"}`), testTimeout)
			if err != nil {
				res = ipc.ToolCallError(callID, err.Error())
			}
			done <- res
		}()
		if decision != "" {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			d, err := questions.Recv(ctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			var q ipc.ApprovalRequired
			if err := q.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil || d.Envelope.SourceID != ipc.KernelSourceID ||
				q.Resource != command || q.CallID != callID || q.Reason != "Capsule 'test-asker' requests approval" {
				t.Fatalf("question %+v from %s (%v)", q, d.Envelope.SourceID, err)
			}
			b, _ := ipc.ApprovalResponse{RequestID: q.RequestID, Decision: decision}.MarshalJSON()
			if _, err := k.Dispatcher.Publish(frontend, ipc.ApprovalResponseTopic(q.RequestID), b); err != nil {
				t.Fatal(err)
			}
		}
		if res := <-done; res.IsError || res.Content != want {
			t.Fatalf("%s: %+v, want %q", command, res, want)
		}
	}
	call("c1", "make test", ipc.DecisionApproveAlways, "approved")
	call("c2", "make test", "", "approved")
	call("c3", "make test && curl evil", ipc.DecisionDeny, "denied")
	if d, ok := questions.TryRecv(); ok {
		t.Fatalf("an extra question: %s", d.Envelope.Payload)
	}
	// Each question and its answer is in the principal's audit chain,
	// the answer on disk before the call went on.
	var got []string
	if err := audit.Show(config.Layout(k.opts.Home).Audit, audit.Filter{Principals: []string{ipc.DefaultPrincipal}}, func(r audit.Record) error {
		if e := r.Entry; e.Capsule == "test-asker" && strings.HasPrefix(string(e.Kind), "approval.") {
			got = append(got, string(e.Kind)+":"+e.Outcome+":"+e.Detail["resource"])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"approval.asked::make test", "approval.answered:allowed:make test",
		"approval.asked::make test", "approval.answered:allowed:make test",
		"approval.asked::make test && curl evil", "approval.answered:denied:make test && curl evil",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("audit entries of the host approval call:\n%q\nwant\n%q", got, want)
	}
}
