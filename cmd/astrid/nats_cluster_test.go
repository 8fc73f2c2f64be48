package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// natsBlockEnv, set in a child's environment to a file path, adds the
// capsule remote-wait to the child's built-ins: its tool "block" writes
// that file when a call starts, then waits for the call to be cancelled.
const natsBlockEnv = "ASTRID_TEST_NATS_BLOCK"

func init() {
	if marker := os.Getenv(natsBlockEnv); marker != "" {
		testBuiltins = append(testBuiltins, remoteWaitBuiltin(marker))
	}
}

func remoteWaitBuiltin(marker string) kernel.Builtin {
	manifest := `
[package]
name = "remote-wait"
version = "0.1.0"
[subscribe]
"tool.v1.execute.block" = { wit = "opaque", handler = "tool_execute_block" }
[publish]
"tool.v1.execute.block.result" = "opaque"
`
	return kernel.Builtin{Manifest: []byte(manifest), New: func() *sdk.Capsule {
		c := sdk.New("test fixture: a tool that waits")
		sdk.Tool(c, "block", "waits until cancelled", func(call *sdk.Call, _ struct{}) (string, error) {
			if err := os.WriteFile(marker, []byte("started"), 0o600); err != nil {
				return "", fmt.Errorf("marker: %w", err)
			}
			<-call.Context().Done()
			return "", errors.New("cancelled")
		})
		return c
	}}
}

// blockCallScript has the model call tool "block", then answer once it has
// the tool's result, whatever it is.
const blockCallScript = `{"match": {"tool_results": ["call-1"]}}
{"TextDelta": "The tool answered."}
"Done"
{"match": {"user": ""}}
{"ToolCallStart": {"id": "call-1", "name": "block"}}
{"ToolCallDelta": {"id": "call-1", "args_delta": "{}"}}
{"ToolCallEnd": {"id": "call-1"}}
"Done"
`

// startNATSDaemon runs `astrid daemon` on home as host id, a node of the
// loopback cluster whose seed is route, and waits until its socket accepts
// a client. env is added to the process's environment.
func startNATSDaemon(t *testing.T, home, ws, id, route string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := astridProcess(home, "daemon", "--workspace", ws,
		"--nats-listen", "127.0.0.1:0", "--nats-routes", route, "--nats-host-id", id)
	cmd.Env = append(cmd.Env, env...)
	var logs testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("daemon %s:\n%s", id, logs.String())
		}
	})
	waitFor(t, "daemon "+id+" to accept a client", func() bool {
		select {
		case <-exited:
			t.Fatalf("daemon %s exited:\n%s", id, logs.String())
		default:
		}
		c, err := dialDaemon(context.Background(), home)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return cmd
}

// servesBlock reports whether the daemon of home hears host id serving
// tool block.
func servesBlock(t *testing.T, home, id string) bool {
	t.Helper()
	rep, _ := statusOf(t, home)
	if rep.Status == nil || rep.NATS == nil {
		return false
	}
	for _, h := range rep.NATS.Hosts {
		if h.ID == id && slices.Contains(h.Intercepts["remote-wait"], "tool.v1.execute.block") {
			return true
		}
	}
	return false
}

// The Show line with daemon processes: two `astrid daemon`s, hosts
// A and B, embed nodes of a 3-node loopback cluster (the third is a plain
// node in this process, the seed). `astrid -p` on A has react call tool
// block, which only host B serves; B's process is killed with SIGKILL
// mid-call, so it sends no word and no shutdown event. The call fails at
// once, naming host B and the closed route (not the silence of three
// presence intervals), and the turn goes on and answers. The rogue-client
// half of the Show line is not here: an embedded node takes no client from
// outside its daemon's process, and its credentials never leave it
// (TestAcrossAClusterOfThree in natsbus and
// TestToolAcrossHostsWithPerCapsuleCredentials in kernel show the refusals).
func TestHostKilledMidCallOnAnEmbeddedCluster(t *testing.T) {
	seed, err := natsbus.StartServer(natsbus.ServerOptions{Name: "nodeC", ClusterName: "astrid", ClusterListen: "127.0.0.1:0"}, natsbus.NewAuthenticator(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		seed.Shutdown()
		seed.WaitForShutdown()
	})
	route := "nats-route://" + seed.ClusterAddr().String()

	wsA := promptHome(t, blockCallScript)
	homeA := os.Getenv("ASTRID_HOME")
	homeB, wsB := t.TempDir(), t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	startNATSDaemon(t, homeA, wsA, "hostA", route)
	b := startNATSDaemon(t, homeB, wsB, "hostB", route, natsBlockEnv+"="+started)
	waitFor(t, "host A to hear host B serving block", func() bool { return servesBlock(t, homeA, "hostB") })

	turn := astridProcess(homeA, "-p", "run it", "--json", "--yes", "--timeout", "2m")
	var out, errOut testutil.SyncBuffer
	turn.Stdout, turn.Stderr = &out, &errOut
	if err := turn.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- turn.Wait() }()
	t.Cleanup(func() {
		_ = turn.Process.Kill()
		<-done
	})
	waitFor(t, "the call to start on host B", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	if err := b.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	var runErr error
	select {
	case runErr = <-done:
		done <- runErr // for the cleanup
	case <-time.After(daemonPatience):
		t.Fatalf("astrid -p did not end after host B was killed:\n%s\n%s", out.String(), errOut.String())
	}
	if runErr != nil {
		t.Fatalf("astrid -p: %v:\n%s\n%s", runErr, out.String(), errOut.String())
	}
	finished, final := turnEvents(t, out.String())
	wantLost := "tool block: host hostB, which was running this call, was lost (" + natsbus.LostRoute + ")"
	if !finished.IsError || finished.Name != "block" || !strings.Contains(finished.Summary, wantLost) {
		t.Fatalf("the tool call finished as %+v, want a failure saying %q", finished, wantLost)
	}
	if final.Outcome == ipc.OutcomeError || final.Outcome == ipc.OutcomeCancelled || !strings.Contains(final.Text, "The tool answered.") {
		t.Fatalf("the turn did not answer after the failed call: %+v", final)
	}
	if servesBlock(t, homeA, "hostB") {
		t.Fatal("host A still lists host B after it was lost")
	}
}

// turnEvents reads `astrid -p --json` output: the tool_finished event and
// the final response.
func turnEvents(t *testing.T, out string) (ipc.AgentToolFinished, ipc.AgentResponse) {
	t.Helper()
	var finished ipc.AgentToolFinished
	var final ipc.AgentResponse
	var sawFinished, sawFinal bool
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("--json line %q: %v", sc.Text(), err)
		}
		var err error
		switch ev.Event {
		case "tool_finished":
			err, sawFinished = json.Unmarshal(ev.Data, &finished), true
		case "response":
			err, sawFinal = json.Unmarshal(ev.Data, &final), true
		}
		if err != nil {
			t.Fatalf("--json %s: %v", ev.Event, err)
		}
	}
	if !sawFinished || !sawFinal {
		t.Fatalf("no tool_finished or response event in:\n%s", out)
	}
	return finished, final
}
