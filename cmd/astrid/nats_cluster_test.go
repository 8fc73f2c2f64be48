package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// natsBlockEnv, set in a child's environment to a file path, adds the
// capsule remote-wait to the child's built-ins: its tool "block" writes the
// host's id (natsHostEnv) to that file when a call starts, then waits for
// the call to be cancelled — unless the file's ".release" sibling exists,
// when it answers "served by <host>" at once.
const (
	natsBlockEnv = "ASTRID_TEST_NATS_BLOCK"
	natsHostEnv  = "ASTRID_TEST_NATS_HOST"
)

func init() {
	if marker := os.Getenv(natsBlockEnv); marker != "" {
		testBuiltins = append(testBuiltins, remoteWaitBuiltin(marker, os.Getenv(natsHostEnv)))
	}
}

func remoteWaitBuiltin(marker, host string) kernel.Builtin {
	manifest := `
[package]
name = "remote-wait"
version = "0.1.0"
[subscribe]
"tool.v1.execute.block" = { wit = "opaque", handler = "tool_execute_block" }
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
[publish]
"tool.v1.execute.block.result" = "opaque"
"tool.v1.response.describe.remote-wait" = "opaque"
`
	return kernel.Builtin{Manifest: []byte(manifest), New: func() *sdk.Capsule {
		c := sdk.New("test fixture: a tool that waits")
		sdk.Tool(c, "block", "waits until cancelled", func(call *sdk.Call, _ struct{}) (string, error) {
			if _, err := os.Stat(marker + ".release"); err == nil {
				return "served by " + host, nil
			}
			if err := os.WriteFile(marker, []byte(host), 0o600); err != nil {
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
func startNATSDaemon(t *testing.T, home, ws, id, route, secret string, env ...string) *exec.Cmd {
	t.Helper()
	return startDaemonWith(t, home, ws, id, []string{"--nats-listen", "127.0.0.1:0", "--nats-routes", route, "--nats-cluster-secret-file", secret}, env...)
}

// startDaemonWith runs `astrid daemon` on home as host id with the NATS
// flags natsArgs, and waits until its socket accepts a client.
func startDaemonWith(t *testing.T, home, ws, id string, natsArgs []string, env ...string) *exec.Cmd {
	t.Helper()
	return startDaemonProcess(t, home, ws, id, append([]string{"--nats-host-id", id}, natsArgs...), env...)
}

// startDaemonProcess runs `astrid daemon` on home with args (named id in
// the test's log), and waits until its socket accepts a client.
func startDaemonProcess(t *testing.T, home, ws, id string, args []string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := astridProcess(home, append([]string{"daemon", "--workspace", ws}, args...)...)
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
	testutil.WaitFor(t, daemonPatience, "daemon "+id+" to accept a client", func() bool {
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

// cluster is a loopback NATS cluster of daemon processes around a seed
// node in this process; host A runs `astrid -p` with the replayed
// blockCallScript, the others serve tool block (remote-wait).
type cluster struct {
	route, homeA, marker string
	wsA                  string // host A's workspace, where its clients work
	daemons              map[string]*exec.Cmd
	homes                map[string]string // the other daemons' homes, by host id
}

func newCluster(t *testing.T, servers ...string) *cluster {
	t.Helper()
	// Each daemon has its own home: they share a secret written here.
	secret := filepath.Join(t.TempDir(), "cluster.secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("a5", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	seed, err := natsbus.StartServer(natsbus.ServerOptions{Name: "seed", ClusterName: "astrid", ClusterListen: "127.0.0.1:0", ClusterSecretFile: secret}, natsbus.NewAuthenticator(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		seed.Shutdown()
		seed.WaitForShutdown()
	})
	c := &cluster{route: "nats-route://" + seed.ClusterAddr().String(), marker: filepath.Join(t.TempDir(), "started"), daemons: map[string]*exec.Cmd{}, homes: map[string]string{}}
	wsA := promptHome(t, blockCallScript)
	c.homeA, c.wsA = os.Getenv("ASTRID_HOME"), wsA
	c.daemons["hostA"] = startNATSDaemon(t, c.homeA, wsA, "hostA", c.route, secret)
	for _, id := range servers {
		c.homes[id] = t.TempDir()
		c.daemons[id] = startNATSDaemon(t, c.homes[id], t.TempDir(), id, c.route, secret, natsBlockEnv+"="+c.marker, natsHostEnv+"="+id)
	}
	for _, id := range servers {
		testutil.WaitFor(t, daemonPatience, "host A to hear "+id+" serving block", func() bool { return servesBlock(t, c.homeA, id) })
	}
	return c
}

// prompt starts `astrid -p` on host A; wait returns its output once it
// exits (failing the test if it does not, or exits non-zero).
func (c *cluster) prompt(t *testing.T) (wait func() string) {
	t.Helper()
	turn := astridProcess(c.homeA, "-p", "run it", "--json", "--yes", "--timeout", "2m")
	turn.Dir = c.wsA // the replay script is read through the caller's workspace
	var out, errOut testutil.SyncBuffer
	turn.Stdout, turn.Stderr = &out, &errOut
	if err := turn.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- turn.Wait() }()
	var ended bool
	t.Cleanup(func() {
		if !ended {
			_ = turn.Process.Kill()
			<-done
		}
	})
	return func() string {
		t.Helper()
		defer func() {
			if !ended {
				t.Logf("astrid -p did not end:\n%s\n%s", out.String(), errOut.String())
			}
		}()
		err := testutil.WaitForRecv(t, daemonPatience, "astrid -p to end", done)
		ended = true
		if err != nil {
			t.Fatalf("astrid -p: %v:\n%s\n%s", err, out.String(), errOut.String())
		}
		return out.String()
	}
}

// killMidCall runs a turn on host A, SIGKILLs the daemon whose block call
// started, and checks that the call failed at once naming that host and
// its closed connection — NATS answering "no responders" on the host's
// liveness subject, not the silence of three presence intervals — and that
// the turn went on and answered. It returns the killed host's id.
func (c *cluster) killMidCall(t *testing.T) string {
	t.Helper()
	return c.killMidCallLost(t, natsbus.LostGone)
}

// killMidCallLost is killMidCall with the loss named reason.
func (c *cluster) killMidCallLost(t *testing.T, reason string) string {
	t.Helper()
	wait := c.prompt(t)
	var host string
	testutil.WaitFor(t, daemonPatience, "the call to start on a host", func() bool {
		b, err := os.ReadFile(c.marker)
		host = string(b)
		return err == nil && host != ""
	})
	if err := c.daemons[host].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	finished, final := turnEvents(t, wait())
	wantLost := "the answer to tool block was lost: host " + host + ", which was handling this request, was lost (" + reason + ")"
	if !finished.IsError || finished.Name != "block" || !strings.Contains(finished.Summary, wantLost) {
		t.Fatalf("the tool call finished as %+v, want a failure saying %q", finished, wantLost)
	}
	if final.Outcome == ipc.OutcomeError || final.Outcome == ipc.OutcomeCancelled || !strings.Contains(final.Text, "The tool answered.") {
		t.Fatalf("the turn did not answer after the failed call: %+v", final)
	}
	if servesBlock(t, c.homeA, host) {
		t.Fatalf("host A still lists %s after it was lost", host)
	}
	return host
}

// The Show line with daemon processes: two `astrid daemon`s, hosts
// A and B, embed nodes of a 3-node loopback cluster (the third is a plain
// node in this process, the seed). `astrid -p` on A has react call tool
// block, which only host B serves; B's process is killed with SIGKILL
// mid-call, so it sends no word and no shutdown event. The call fails at
// once, naming host B and its closed connection, and the turn goes on and
// answers. Every daemon loads the router: A's holds the call, and B's
// leaves the result to it. The rogue-client half of the Show line is not
// here: an embedded node takes no client from outside its daemon's
// process, and its credentials never leave it. On an external cluster,
// where credentials are files a thief can take,
// TestDaemonsOnAnOperatorClusterWithMintedCredentials shows the refusals.
func TestHostKilledMidCallOnAnEmbeddedCluster(t *testing.T) {
	c := newCluster(t, "hostB")
	if host := c.killMidCall(t); host != "hostB" {
		t.Fatalf("the call ran on %s", host)
	}
}

// With the tool on hosts B and C: the call in flight on the host killed
// fails (it may have acted: it is not run again behind the caller's back),
// and the next turn's call is served by the host left.
func TestKilledHostsNextCallGoesToTheHostLeft(t *testing.T) {
	c := newCluster(t, "hostB", "hostC")
	lost := c.killMidCall(t)
	left := map[string]string{"hostB": "hostC", "hostC": "hostB"}[lost]
	if err := os.WriteFile(c.marker+".release", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	finished, final := turnEvents(t, c.prompt(t)())
	if finished.IsError || !strings.Contains(finished.Summary, "served by "+left) || !strings.Contains(final.Text, "The tool answered.") {
		t.Fatalf("the next call after %s was lost: %+v, %+v; want it served by %s", lost, finished, final, left)
	}
}

// Issue 31 item 3 with daemon processes: tool block, served only by host
// B's daemon, is listed by `astrid tool list` on host A with B's id (the
// table gains a HOST column) and offered to the model by A's daemon, whose
// request to an OpenAI-compatible server names it once; read_file, which
// both daemons serve, is listed and offered once, as host A's.
func TestRemoteToolListedAndOfferedOnAnotherDaemon(t *testing.T) {
	c := newCluster(t, "hostB")
	// A capsule loaded on the asking host answers there only, which host
	// B can tell once it has heard host A.
	testutil.WaitFor(t, daemonPatience, "host B to hear host A describing tools", func() bool {
		rep, _ := statusOf(t, c.homes["hostB"])
		return rep.Status != nil && rep.NATS != nil && slices.ContainsFunc(rep.NATS.Hosts, func(h natsbus.HostInfo) bool {
			return h.ID == "hostA" && slices.Contains(h.Intercepts["astrid-capsule-fs"], ipc.ToolRequestDescribeTopic)
		})
	})
	out, code := runProcess(t, c.homeA, "tool", "list", "--json")
	if code != 0 {
		t.Fatalf("tool list --json: exit %d:\n%s", code, out)
	}
	var tools []toolclient.ToolInfo
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("tool list --json: %v:\n%s", err, out)
	}
	count := map[string]int{}
	for _, tl := range tools {
		count[tl.Name]++
		switch {
		case tl.Name == "block" && (tl.Host != "hostB" || tl.Capsule != "remote-wait"):
			t.Errorf("block listed as %+v, want remote-wait on hostB", tl)
		case tl.Name == "read_file" && tl.Host != "":
			t.Errorf("read_file listed as %+v, want host A's own", tl)
		}
	}
	if count["block"] != 1 || count["read_file"] != 1 {
		t.Fatalf("block listed %d times, read_file %d times, want once each:\n%s", count["block"], count["read_file"], out)
	}
	out, code = runProcess(t, c.homeA, "tool", "list")
	hasRow := func(cells ...string) bool {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= len(cells) && slices.Equal(f[:len(cells)], cells) {
				return true
			}
		}
		return false
	}
	if code != 0 || !hasRow("TOOL", "CAPSULE", "HOST", "MUTABLE", "DESCRIPTION") || !hasRow("block", "remote-wait", "hostB", "no") ||
		!hasRow("read_file", "astrid-capsule-fs", "local", "no") {
		t.Fatalf("tool list: exit %d:\n%s", code, out)
	}

	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, openAIChunk(`{"role":"assistant","content":"Offered."}`, "null"))
		io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	turn := astridProcess(c.homeA, "-p", "which tools?", "--provider", "openai", "--model", "test-model")
	turn.Dir = c.wsA
	turn.Env = append(turn.Env, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=")
	if b, err := turn.CombinedOutput(); err != nil || !strings.Contains(string(b), "Offered.") {
		t.Fatalf("astrid -p: %v:\n%s", err, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d model requests, want 1: %q", len(bodies), bodies)
	}
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &req); err != nil {
		t.Fatalf("model request: %v: %s", err, bodies[0])
	}
	offered := map[string]int{}
	for _, tl := range req.Tools {
		offered[tl.Function.Name]++
	}
	if offered["block"] != 1 || offered["read_file"] != 1 {
		t.Fatalf("the model is offered block %d times, read_file %d times, want once each: %s", offered["block"], offered["read_file"], bodies[0])
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
