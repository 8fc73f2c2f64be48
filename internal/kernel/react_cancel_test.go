//go:build linux

package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// runnerToolManifest is a test tool capsule whose tool run_script runs one
// of runnerScripts through the host process call.
var runnerToolManifest = []byte(`
[package]
name = "test-runner-tool"
version = "0.1.0"

[capabilities]
fs_read = ["*"]
fs_write = ["*"]
host_process = ["sh"]

[subscribe]
"tool.v1.execute.run_script" = { wit = "opaque", handler = "tool_execute_run_script" }

[publish]
"tool.v1.execute.run_script.result" = "opaque"
`)

// runnerScripts are what run_script runs, by name; each writes the pids to
// watch to ./pid (through a rename, so it is never read half-written).
var runnerScripts = map[string]string{
	// SIGINT ends sleep: the run ends by the interrupt.
	"sleep": `echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 600`,
	// The shell traps SIGINT (and says so in ./got) and keeps a sleeper:
	// only the SIGKILL after the grace ends them.
	"trap": `trap 'echo int >> got' INT; sleep 600 & echo "$$ $!" > pid.tmp; mv pid.tmp pid; while :; do sleep 0.05; done`,
}

func newRunnerTool() *sdk.Capsule {
	c := sdk.New("test fixture: runs a script through the host")
	sdk.Tool(c, "run_script", "runs a named script", func(call *sdk.Call, a struct {
		Name string `json:"name"`
	}) (string, error) {
		res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", runnerScripts[a.Name]}})
		if err != nil {
			return "", fmt.Errorf("%w (the script ended by %q)", err, res.Signal)
		}
		return string(res.Stdout), nil
	})
	return c
}

// toolCallScript is a replay script whose turn calls tool with args (a
// JSON object) and, should the call ever answer, says so.
func toolCallScript(tool, args string) string {
	return `{"match": {"tool_results": ["call-1"]}}
{"TextDelta": "The tool answered."}
"Done"
{"match": {"user": ""}}
{"ToolCallStart": {"id": "call-1", "name": "` + tool + `"}}
{"ToolCallDelta": {"id": "call-1", "args_delta": ` + fmt.Sprintf("%q", args) + `}}
{"ToolCallEnd": {"id": "call-1"}}
"Done"
`
}

// toolWatcher is a test frontend that hears the router's consolidated tool
// results: what the cancelled tool answered once the turn was over.
const toolWatcher = "test-tool-watcher"

// bootReactAgent boots react (native) with the router, the session store,
// a pass-through prompt builder and the replay provider playing script,
// plus builtins, as `astrid -p` would.
func bootReactAgent(t *testing.T, script string, builtins ...Builtin) (*Kernel, string) {
	t.Helper()
	return bootReactAgentWith(t, config.Default(), script, builtins...)
}

// bootReactAgentWith is bootReactAgent with cfg.
func bootReactAgentWith(t *testing.T, cfg config.Config, script string, builtins ...Builtin) (*Kernel, string) {
	t.Helper()
	return bootAgentCore(t, cfg, script, append([]Builtin{{Manifest: router.Manifest, New: router.New}}, builtins...)...)
}

// bootAgentCore is bootReactAgentWith without the router, unless builtins
// bring it: react, the session store, a pass-through prompt builder and the
// replay provider playing script.
func bootAgentCore(t *testing.T, cfg config.Config, script string, builtins ...Builtin) (*Kernel, string) {
	t.Helper()
	home := t.TempDir()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	setReplayScript(t, home, ws, script)
	k, err := Boot(context.Background(), Options{
		Home: home, Workspace: ws, Config: cfg,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Builtins: append([]Builtin{
			{Manifest: session.Manifest, New: session.New},
			{Manifest: replay.Manifest, New: replay.New},
			{Manifest: passThroughAssemblerManifest, New: newPassThroughAssembler},
			{Manifest: react.Manifest, New: react.New},
		}, builtins...),
		Frontends: append(testFrontends(), agentclient.ACL(), dispatch.CapsuleACL{ID: toolWatcher, Subscribe: []string{ipc.ToolExecuteResultTopic}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k, ws
}

// interruptedTurn runs a prompt through agentclient.Run, as `astrid -p`
// does, and interrupts it (the context `astrid -p` cancels on Ctrl-C) once
// started says the tool is running. It returns the final response, the
// tool's own result, heard on the consolidated topic, and Run's error.
func interruptedTurn(t *testing.T, k *Kernel, started func()) (ipc.AgentResponse, ipc.ToolCallResult, error) {
	t.Helper()
	// The consolidated result answers react, not this test: an observer
	// sees it (a route of a capsule that did not ask would not).
	results := observe(t, k, ipc.ToolExecuteResultTopic)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	sawStart := false
	final, runErr := agentclient.Run(ctx, k.Frontend(), agentclient.Prompt{SessionID: "s1", Text: "run it"}, func(_ *agentclient.Turn, ev agentclient.Event) {
		if ev.Kind == agentclient.EventToolStarted && !sawStart {
			sawStart = true
			started()
			interrupt()
		}
	})
	if !sawStart {
		t.Fatalf("the tool never started: %+v %v", final, runErr)
	}
	wait, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	d, err := results.Recv(wait)
	if err != nil {
		t.Fatalf("the cancelled tool never answered: %v (final %+v %v)", err, final, runErr)
	}
	var r ipc.ToolExecuteResult
	if err := r.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil {
		t.Fatal(err)
	}
	// react names the call itself (the provider's id is not unique across
	// turns); the turn has this one call, so the first result is its.
	return final, r.Result, runErr
}

// The Show line, through react: a tool running `sleep 600`, and one
// whose shell traps SIGINT, is cancelled mid-call from the frontend as
// `astrid -p` cancels on Ctrl-C. SIGINT arrives (the trap writes it down),
// then SIGKILL; no process of the run remains; the turn ends cancelled and
// the tool's result says it was cancelled.
func TestReactCancelKillsAToolsProcesses(t *testing.T) {
	cases := []struct{ name string }{{"sleep"}, {"trap"}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, ws := bootReactAgent(t, toolCallScript("run_script", `{"name":"`+tc.name+`"}`), Builtin{Manifest: runnerToolManifest, New: newRunnerTool})
			var pids []int
			final, result, runErr := interruptedTurn(t, k, func() {
				pids = testutil.PidFile(t, testTimeout, filepath.Join(ws, "pid"))
			})
			if final.Outcome != ipc.OutcomeCancelled || !errors.Is(runErr, context.Canceled) {
				t.Fatalf("final %+v, %v: want outcome cancelled", final, runErr)
			}
			if !result.IsError || !strings.HasPrefix(result.Content, "tool run_script was cancelled before it answered") {
				t.Fatalf("the tool's result %+v: want it cancelled", result)
			}
			// The result goes out as the cancel lands; the run ends
			// within the grace (SIGINT, then SIGKILL).
			testutil.WaitFor(t, testTimeout, "the run's processes to end", func() bool {
				for _, pid := range pids {
					if syscall.Kill(pid, 0) == nil {
						return false
					}
				}
				return true
			})
			testutil.NoProcess(t, pids...)
			if tc.name == "trap" {
				// The trap keeps the shell alive through SIGINT, so
				// only the SIGKILL that followed can have ended it.
				if b, _ := os.ReadFile(filepath.Join(ws, "got")); !strings.Contains(string(b), "int") {
					t.Error("the trap never saw SIGINT before SIGKILL")
				}
			}
		})
	}
}

// The same through react for a wasm tool in an infinite loop: the cancel
// interrupts the guest, whose registered failure reply is the tool's
// result (the loop never answers by itself), and the capsule still serves.
func TestReactCancelInterruptsASpinningWasmTool(t *testing.T) {
	k, _ := bootReactAgent(t, toolCallScript("spin", `{}`))
	loadHostileWasmWith(t, k, nil)
	final, result, runErr := interruptedTurn(t, k, func() {})
	if final.Outcome != ipc.OutcomeCancelled || !errors.Is(runErr, context.Canceled) {
		t.Fatalf("final %+v, %v: want outcome cancelled", final, runErr)
	}
	if !result.IsError || !strings.HasPrefix(result.Content, "tool spin was cancelled before it answered") {
		t.Fatalf("the tool's result %+v: want it cancelled", result)
	}
	c, _ := k.Registry.Get("hostile")
	v, err := c.Invoke(context.Background(), hostapi.Invocation{Handler: "echo", Topic: "hostile.v1.echo", Principal: ipc.DefaultPrincipal, Payload: []byte(`"still here"`)})
	if err != nil || !strings.Contains(string(v.Payload), "still here") {
		t.Fatalf("after the cancel: %q %v", v.Payload, err)
	}
}
