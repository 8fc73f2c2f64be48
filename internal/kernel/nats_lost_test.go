//go:build linux

package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// remoteWaitManifest provides tool "block", which answers at once unless asked
// to wait; then it waits for its call to be cancelled or the test to end.
var remoteWaitManifest = []byte(`
[package]
name = "remote-wait"
version = "0.1.0"

[subscribe]
"tool.v1.execute.block" = { wit = "opaque", handler = "tool_execute_block" }

[publish]
"tool.v1.execute.block.result" = "opaque"
`)

// blockerSignals is what the tool "block" of each host reports: the host a
// waiting call started on, and the host whose waiting call was cancelled.
type blockerSignals struct {
	started, cancelled chan string
	release            chan struct{}
}

func newBlockerSignals(t *testing.T) *blockerSignals {
	return &blockerSignals{started: make(chan string, 8), cancelled: make(chan string, 8), release: make(chan struct{})}
}

func (s *blockerSignals) builtin(host string) Builtin {
	return Builtin{Manifest: remoteWaitManifest, New: func() *sdk.Capsule {
		c := sdk.New("test fixture: a tool that waits")
		sdk.Tool(c, "block", "waits if asked", func(call *sdk.Call, a struct {
			Wait bool `json:"wait"`
		}) (string, error) {
			if !a.Wait {
				return "served by " + host, nil
			}
			s.started <- host
			select {
			case <-call.Context().Done():
				s.cancelled <- host
				return "", errors.New("cancelled on " + host)
			case <-s.release:
				return "released on " + host, nil
			}
		})
		return c
	}}
}

func (s *blockerSignals) next(t *testing.T, ch chan string, what string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	select {
	case h := <-ch:
		return h
	case <-ctx.Done():
		t.Fatalf("no tool call %s", what)
		return ""
	}
}

// meshNode is the [nats] settings of one node of a loopback cluster whose
// seed listens on seedPort, and whose nodes share the secret in file
// secret (testClusterSecret).
func meshNode(host string, port, seedPort int, secret string) config.NATS {
	n := config.NATS{HostID: host, ClusterName: "mesh", Listen: fmt.Sprintf("127.0.0.1:%d", port), ClusterSecretFile: secret}
	if port != seedPort {
		n.Routes = []string{fmt.Sprintf("nats-route://127.0.0.1:%d", seedPort)}
	}
	return n
}

// bootToolHost boots a kernel with the given builtins on node n.
func bootToolHost(t *testing.T, n config.NATS, builtins ...Builtin) *Kernel {
	t.Helper()
	cfg := config.Default()
	cfg.NATS = n
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Builtins: builtins, Frontends: testFrontends(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// meshOfThree boots react with the replay provider playing script on host
// A, and a kernel on each of hosts B and C (the tool "block" on B, and on
// C too if both), each embedding a node of one 3-node cluster; it returns
// once A's router knows block's providers.
func meshOfThree(t *testing.T, script string, both bool) (a, b, c *Kernel, s *blockerSignals) {
	t.Helper()
	pa, pb, pc := freePort(t), freePort(t), freePort(t)
	secret := testClusterSecret(t)
	cfg := config.Default()
	cfg.NATS = meshNode("hostA", pa, pa, secret)
	a, _ = bootReactAgentWith(t, cfg, script)
	s = newBlockerSignals(t)
	b = bootToolHost(t, meshNode("hostB", pb, pa, secret), s.builtin("hostB"))
	var onC []Builtin
	if both {
		onC = append(onC, s.builtin("hostC"))
	}
	c = bootToolHost(t, meshNode("hostC", pc, pa, secret), onC...)
	// Cleanups run last first: the waiting tools let go before the
	// kernels close.
	t.Cleanup(func() { close(s.release) })
	want := 1
	if both {
		want = 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for {
		served := 0
		for _, h := range a.NATSTransport().Hosts() {
			if h.ID != "hostA" && slices.Contains(h.Intercepts["remote-wait"], "tool.v1.execute.block") {
				served++
			}
		}
		// B and C must know each other's provider too, so that the
		// tool's queue group holds both when the calls start.
		if served == want && slices.Contains(a.Dispatcher.ExactInterceptors("tool.v1.execute.block"), "remote-wait") &&
			(!both || servesBlock(b, "hostC") && servesBlock(c, "hostB")) {
			return a, b, c, s
		}
		if ctx.Err() != nil {
			t.Fatalf("host A never learnt the hosts serving block: %+v", a.NATSTransport().Hosts())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// servesBlock reports whether k knows that host serves the tool block.
func servesBlock(k *Kernel, host string) bool {
	return slices.ContainsFunc(k.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool {
		return h.ID == host && slices.Contains(h.Intercepts["remote-wait"], "tool.v1.execute.block")
	})
}

// runTurn runs a prompt on host A as `astrid -p` does, calling during(host,
// interrupt) once the tool has started on host (interrupt is the Ctrl-C of
// `astrid -p`); it returns the final response, the
// tool's result (heard on the consolidated topic) and Run's error.
func runTurn(t *testing.T, a *Kernel, s *blockerSignals, during func(host string, interrupt func())) (ipc.AgentResponse, ipc.ToolCallResult, error) {
	t.Helper()
	// The consolidated result answers react, not this test: an observer
	// sees it (a route of a capsule that did not ask would not).
	results := observe(t, a, ipc.ToolExecuteResultTopic)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	go func() {
		select {
		case h := <-s.started:
			during(h, interrupt)
		case <-ctx.Done():
		}
	}()
	final, runErr := agentclient.Run(ctx, a.Frontend(), agentclient.Prompt{SessionID: "s1", Text: "run it"}, func(*agentclient.Turn, agentclient.Event) {})
	wait, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	d, err := results.Recv(wait)
	if err != nil {
		t.Fatalf("the tool call never answered: %v (final %+v %v)", err, final, runErr)
	}
	var r ipc.ToolExecuteResult
	if err := r.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil {
		t.Fatal(err)
	}
	return final, r.Result, runErr
}

// The Show line: react on host A calls a tool on host B; B's NATS
// node shuts down mid-call (its kernel could not say it leaves) → the call
// fails at once naming host B, and the turn goes on and answers.
func TestHostLostMidCallFailsTheCallAtOnce(t *testing.T) {
	a, b, _, s := meshOfThree(t, toolCallScript("block", `{"wait":true}`), false)
	final, result, runErr := runTurn(t, a, s, func(host string, _ func()) {
		if host != "hostB" {
			t.Errorf("the call ran on %s", host)
		}
		b.nats.server.Shutdown()
	})
	if runErr != nil || final.Outcome == ipc.OutcomeError || final.Outcome == ipc.OutcomeCancelled || !strings.Contains(final.Text, "The tool answered.") {
		t.Fatalf("the turn did not answer after the failed call: %+v %v", final, runErr)
	}
	if !result.IsError || !strings.Contains(result.Content, "host hostB, which was handling this request, was lost") || !strings.Contains(result.Content, "tool block") {
		t.Fatalf("the tool's result %+v: want a failure naming host B", result)
	}
}

// With the tool on hosts B and C: the call in flight on the lost host fails
// (it may have acted there: it is not run again elsewhere behind the
// caller's back), and the next call is served by the host left.
func TestHostLostMidCallTheOtherHostServesTheNext(t *testing.T) {
	a, b, c, s := meshOfThree(t, toolCallScript("block", `{"wait":true}`), true)
	var lost string
	_, result, runErr := runTurn(t, a, s, func(host string, _ func()) {
		lost = host
		k := map[string]*Kernel{"hostB": b, "hostC": c}[host]
		k.nats.server.Shutdown()
	})
	if runErr != nil || !result.IsError || !strings.Contains(result.Content, "host "+lost+", which was handling this request, was lost") {
		t.Fatalf("the tool's result %+v (%v): want a failure naming %s", result, runErr, lost)
	}
	left := map[string]string{"hostB": "hostC", "hostC": "hostB"}[lost]
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for i := range 8 { // NATS hands each call to the group's members left
		res, err := a.CallTool(ctx, ipc.DefaultPrincipal, "block", json.RawMessage(`{"wait":false}`), testTimeout)
		if err != nil || res.IsError || res.Content != "served by "+left {
			t.Fatalf("call %d after %s was lost: %+v %v", i, lost, res, err)
		}
	}
}

// Cancel across hosts: cancelling the turn on host A reaches the tool call
// running on host B, whose context ends there; the call answers as
// cancelled.
func TestCancelReachesTheHostRunningTheCall(t *testing.T) {
	a, _, _, s := meshOfThree(t, toolCallScript("block", `{"wait":true}`), false)
	final, result, runErr := runTurn(t, a, s, func(_ string, interrupt func()) { interrupt() })
	if final.Outcome != ipc.OutcomeCancelled || !errors.Is(runErr, context.Canceled) {
		t.Fatalf("final %+v, %v: want outcome cancelled", final, runErr)
	}
	if h := s.next(t, s.cancelled, "cancelled"); h != "hostB" {
		t.Fatalf("the cancel reached %s", h)
	}
	if !result.IsError || !strings.Contains(result.Content, "cancelled") {
		t.Fatalf("the cancelled call answered %+v", result)
	}
}

// askerID is a frontend identity of host A that sends requests on
// mesh.v1.ask and hears their answers on mesh.v1.ask.reply.
const askerID = "test-asker"

// holderManifest intercepts mesh.v1.ask, a topic with no convention the
// kernel could know.
var holderManifest = []byte(`
[package]
name = "test-answerer"
version = "0.1.0"

[subscribe]
"mesh.v1.ask" = { wit = "opaque", handler = "ask" }

[publish]
"mesh.v1.ask.reply" = "opaque"
`)

// holder reports on started when a request reaches it, then holds it
// until the call ends.
func holder(started chan<- struct{}) Builtin {
	return Builtin{Manifest: holderManifest, New: func() *sdk.Capsule {
		c := sdk.New("test fixture: holds every request it takes")
		c.Handle("mesh.v1.ask", "ask", func(call *sdk.Call) error {
			started <- struct{}{}
			<-call.Context().Done()
			return call.Context().Err()
		})
		return c
	}}
}

// TestRequestToALostHostIsAnsweredOnce: a request published on host A
// as a request (dispatch.RequestOf), taken by a capsule on host B only, is
// answered by A's kernel on its reply address — reason host_lost, naming
// host B — as soon as B's NATS node shuts down mid-request, and exactly
// once. Neither the transport nor the kernel knows what mesh.v1.ask means.
func TestRequestToALostHostIsAnsweredOnce(t *testing.T) {
	pa, pb := freePort(t), freePort(t)
	secret := testClusterSecret(t)
	cfg := config.Default()
	cfg.NATS = meshNode("hostA", pa, pa, secret)
	asker := dispatch.CapsuleACL{ID: askerID, Publish: []string{"mesh.v1.ask"}, Subscribe: []string{"mesh.v1.ask.reply"}}
	a, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Frontends: append(testFrontends(), asker),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	started := make(chan struct{}, 1)
	b := bootToolHost(t, meshNode("hostB", pb, pa, secret), holder(started))
	testutil.WaitFor(t, testTimeout, "host A to hear host B's answerer", func() bool {
		return slices.ContainsFunc(a.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool {
			return h.ID == "hostB" && slices.Contains(h.Intercepts["test-answerer"], "mesh.v1.ask")
		})
	})

	from := dispatch.Caller{Capsule: askerID, Principal: ipc.DefaultPrincipal}
	replies, err := a.Dispatcher.Subscribe(from, "mesh.v1.ask.reply", false)
	if err != nil {
		t.Fatal(err)
	}
	defer replies.Close()
	if _, err := a.Dispatcher.Publish(from, "mesh.v1.ask", json.RawMessage(`{"q":1}`), dispatch.RequestOf(dispatch.Request{ReplyTo: "mesh.v1.ask.reply", CorrelationID: "q1", Timeout: 10 * testTimeout})); err != nil {
		t.Fatal(err)
	}
	if n := a.NATSTransport().RemoteRequests(); n != 1 {
		t.Fatalf("host A tracks %d requests, want 1", n)
	}
	select {
	case <-started:
	case <-time.After(testTimeout):
		t.Fatal("the request never reached host B")
	}
	b.nats.server.Shutdown()

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	d, err := replies.Recv(ctx)
	if err != nil {
		t.Fatalf("no answer on the reply address: %v", err)
	}
	e := d.Envelope
	f, ok := ipc.AsRequestFailed(e.Payload)
	if !ok || e.SourceID != ipc.KernelSourceID || !e.IsReply() || e.CorrelationID() != "q1" || e.Principal != ipc.DefaultPrincipal ||
		f.Reason != ipc.FailHostLost || f.CorrelationID != "q1" || !strings.Contains(f.Message, "host hostB, which was handling this request, was lost") {
		t.Fatalf("answer %+v %s: want the kernel's host_lost failure of q1 naming host B", e, e.Payload)
	}
	if a.Dispatcher.Pending() != 0 || a.NATSTransport().RemoteRequests() != 0 {
		t.Fatalf("after the answer: %d requests pending, %d tracked", a.Dispatcher.Pending(), a.NATSTransport().RemoteRequests())
	}
	// Once: every later sign of B's loss (its route closing, its silence)
	// finds nothing left to answer. A negative, so the wait is the point:
	// three presence intervals, the slowest of those signs.
	testutil.WaitFor(t, testTimeout, "host A to forget host B", func() bool {
		return !slices.ContainsFunc(a.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool { return h.ID == "hostB" })
	})
	quiet, stop := context.WithTimeout(context.Background(), 3*natsbus.DefaultPresenceInterval)
	defer stop()
	if d, err := replies.Recv(quiet); err == nil {
		t.Fatalf("a second answer: %+v %s", d.Envelope, d.Envelope.Payload)
	}
}
