//go:build linux

package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// routerID is the router capsule's id.
const routerID = "astrid-capsule-router"

func routerBuiltin() Builtin { return Builtin{Manifest: router.Manifest, New: router.New} }

// routerMesh is three kernels on one loopback cluster: the agent (react and
// the replay provider) on A, with the router only if routerOnA; the router on
// B; on C whatever onC holds. The tool "block" is on A when toolOnA, else on
// C.
type routerMesh struct {
	a, b, c *Kernel
	s       *blockerSignals
	// release lets the waiting calls of block answer, once.
	release func()
}

func newRouterMesh(t *testing.T, script string, routerOnA, toolOnA bool, onC ...Builtin) *routerMesh {
	t.Helper()
	return newRouterMeshWith(t, script, routerOnA, toolOnA, []Builtin{routerBuiltin()}, onC...)
}

// newRouterMeshWith is newRouterMesh with onB on host B.
func newRouterMeshWith(t *testing.T, script string, routerOnA, toolOnA bool, onB []Builtin, onC ...Builtin) *routerMesh {
	t.Helper()
	pa, pb, pc := freePort(t), freePort(t), freePort(t)
	s := newBlockerSignals(t)
	var onA []Builtin
	if routerOnA {
		onA = append(onA, routerBuiltin())
	}
	if toolOnA {
		onA = append(onA, s.builtin("hostA"))
	} else {
		onC = append(onC, s.builtin("hostC"))
	}
	secret := testClusterSecret(t)
	cfg := config.Default()
	cfg.NATS = meshNode("hostA", pa, pa, secret)
	a, _ := bootAgentCore(t, cfg, script, onA...)
	b := bootToolHost(t, meshNode("hostB", pb, pa, secret), onB...)
	c := bootToolHost(t, meshNode("hostC", pc, pa, secret), onC...)
	m := &routerMesh{a: a, b: b, c: c, s: s, release: sync.OnceFunc(func() { close(s.release) })}
	t.Cleanup(m.release)
	// Ready when A knows B's router and every router knows block's
	// provider.
	testutil.WaitFor(t, testTimeout, "the hosts to learn the router and the tool", func() bool {
		if !slices.ContainsFunc(a.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool {
			return h.ID == "hostB" && slices.Contains(h.Capsules, routerID)
		}) {
			return false
		}
		for _, k := range []*Kernel{a, b} {
			if !slices.Contains(k.Dispatcher.ExactInterceptors("tool.v1.execute.block"), "remote-wait") {
				return false
			}
		}
		return !routerOnA || slices.ContainsFunc(b.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool {
			return h.ID == "hostA" && slices.Contains(h.Capsules, routerID)
		})
	})
	return m
}

// (a) The router only on host B: react on host A calls a tool on host C, or
// on A itself; B routes the call and the consolidated result reaches react
// on A, which takes it from a router on another host.
func TestToolCallRoutedOnAnotherHost(t *testing.T) {
	for _, toolOnA := range []bool{false, true} {
		name, want := "tool on C", "served by hostC"
		if toolOnA {
			name, want = "tool on A", "served by hostA"
		}
		t.Run(name, func(t *testing.T) {
			m := newRouterMesh(t, toolCallScript("block", `{"wait":false}`), false, toolOnA)
			final, result, runErr := runTurn(t, m.a, m.s, func(string, func()) {})
			if runErr != nil || final.Outcome == ipc.OutcomeError || !strings.Contains(final.Text, "The tool answered.") {
				t.Fatalf("the turn did not go on after the call: %+v %v", final, runErr)
			}
			if result.IsError || result.Content != want {
				t.Fatalf("the tool's result %+v, want %q", result, want)
			}
			if n := m.b.NATSTransport().RemoteRequests(); n != 0 {
				t.Fatalf("host B still tracks %d requests", n)
			}
		})
	}
}

// (a) with the approval layer beside the router on host B: its question
// reaches the person on host A, whose answer reaches it back on B, and the
// approved call runs on C.
func TestApprovedToolCallRoutedOnAnotherHost(t *testing.T) {
	m := newRouterMeshWith(t, toolCallScript("block", `{"wait":false}`), false, false,
		[]Builtin{routerBuiltin(), {Manifest: approval.Manifest, New: approval.New}})
	testutil.WaitFor(t, testTimeout, "host A to learn the approval layer", func() bool {
		return slices.Contains(m.a.Dispatcher.Interceptors(ipc.ToolRequestExecuteTopic), "astrid-capsule-approval")
	})
	asked := 0
	final, err := agentclient.Run(context.Background(), m.a.Frontend(), agentclient.Prompt{SessionID: "s1", Text: "run it"}, func(turn *agentclient.Turn, ev agentclient.Event) {
		if ev.Kind != agentclient.EventApproval {
			return
		}
		asked++
		if ev.Approval.Action != "block" {
			t.Errorf("a question about %+v", ev.Approval)
		}
		if err := turn.Answer(ev.Approval.RequestID, ipc.DecisionApprove); err != nil {
			t.Error(err)
		}
	})
	if err != nil || final.Outcome == ipc.OutcomeError || !strings.Contains(final.Text, "The tool answered.") {
		t.Fatalf("the turn did not go on after the call: %+v %v", final, err)
	}
	if asked != 1 {
		t.Fatalf("%d approval questions, want 1", asked)
	}
}

// (c) Cancel with the router on B: cancelling the turn on A reaches the
// call running on C, and its cancelled answer comes back through B.
func TestCancelReachesTheToolWhenTheRouterIsOnAnotherHost(t *testing.T) {
	m := newRouterMesh(t, toolCallScript("block", `{"wait":true}`), false, false)
	final, result, runErr := runTurn(t, m.a, m.s, func(_ string, interrupt func()) { interrupt() })
	if final.Outcome != ipc.OutcomeCancelled || !errors.Is(runErr, context.Canceled) {
		t.Fatalf("final %+v, %v: want outcome cancelled", final, runErr)
	}
	if h := m.s.next(t, m.s.cancelled, "cancelled"); h != "hostC" {
		t.Fatalf("the cancel reached %s", h)
	}
	if !result.IsError || !strings.Contains(result.Content, "cancelled") {
		t.Fatalf("the cancelled call answered %+v", result)
	}
}

// (d) The tool's host lost mid-call with the router on B: B published the
// call, so B's kernel answers it, and the failure reaches react on A.
func TestHostLostMidCallWhenTheRouterIsOnAnotherHost(t *testing.T) {
	m := newRouterMesh(t, toolCallScript("block", `{"wait":true}`), false, false)
	final, result, runErr := runTurn(t, m.a, m.s, func(host string, _ func()) {
		if host != "hostC" {
			t.Errorf("the call ran on %s", host)
		}
		m.c.nats.server.Shutdown()
	})
	if runErr != nil || final.Outcome == ipc.OutcomeError || final.Outcome == ipc.OutcomeCancelled || !strings.Contains(final.Text, "The tool answered.") {
		t.Fatalf("the turn did not answer after the failed call: %+v %v", final, runErr)
	}
	if !result.IsError || !strings.Contains(result.Content, "host hostC, which was handling this request, was lost") {
		t.Fatalf("the tool's result %+v: want a failure naming host C", result)
	}
}

// blockForgerManifest provides the tool forge_block, which publishes a forged
// result for someone else's call of block; tool_middleware lets it publish
// on any tool's result topic (TestForgedResultsAreNotAccepted).
var blockForgerManifest = []byte(`
[package]
name = "test-block-forger"
version = "0.1.0"

[capabilities]
tool_middleware = true

[subscribe]
"tool.v1.execute.forge_block" = { wit = "opaque", handler = "tool_execute_forge_block" }

[publish]
"tool.v1.execute.*.result" = "opaque"
`)

func blockForger() Builtin {
	return Builtin{Manifest: blockForgerManifest, New: func() *sdk.Capsule {
		c := sdk.New("forges block results")
		sdk.Tool(c, "forge_block", "forges a result of block", func(call *sdk.Call, a forgeArgs) (string, error) {
			forged, err := ipc.ToolExecuteResult{CallID: a.CallID, Result: ipc.ToolCallResult{CallID: a.CallID, Content: "FORGED"}}.MarshalJSON()
			if err != nil {
				return "", err
			}
			if err := call.Publish(ipc.ToolResultTopic("block"), forged); err != nil {
				return "", err
			}
			return "done", nil
		})
		return c
	}}
}

// remoteCaller publishes tool requests on host k as the CLI would, with no
// router on k: whichever host's router NATS hands it to takes each call.
type remoteCaller struct {
	t       *testing.T
	k       *Kernel
	results chan ipc.ToolExecuteResult
}

func newRemoteCaller(t *testing.T, k *Kernel) *remoteCaller {
	sub, err := k.Dispatcher.Subscribe(dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal}, ipc.ToolExecuteResultTopic, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rc := &remoteCaller{t: t, k: k, results: make(chan ipc.ToolExecuteResult, 1024)}
	go func() {
		defer close(rc.results)
		for {
			d, err := sub.Recv(ctx)
			if err != nil {
				return
			}
			var r ipc.ToolExecuteResult
			if err := r.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil || d.Envelope.SourceID != routerID {
				t.Errorf("on the consolidated topic: %s from %s (%v)", d.Envelope.Payload, d.Envelope.SourceID, err)
				continue
			}
			rc.results <- r
		}
	}()
	t.Cleanup(func() { cancel(); sub.Close() })
	return rc
}

func (rc *remoteCaller) call(callID, tool, args string) {
	rc.t.Helper()
	req, err := ipc.ToolExecuteRequest{CallID: callID, ToolName: tool, Arguments: json.RawMessage(args)}.MarshalJSON()
	if err != nil {
		rc.t.Fatal(err)
	}
	if _, err := rc.k.Dispatcher.Publish(dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal}, ipc.ToolRequestExecuteTopic, req, dispatch.RequestOf(dispatch.Request{ReplyTo: ipc.ToolExecuteResultTopic, CorrelationID: callID, Timeout: testTimeout})); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *remoteCaller) next() ipc.ToolExecuteResult {
	rc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	select {
	case r, ok := <-rc.results:
		if !ok {
			rc.t.Fatal("the results subscription ended")
		}
		return r
	case <-ctx.Done():
		rc.t.Fatal("a tool call was never answered")
	}
	return ipc.ToolExecuteResult{}
}

// (b) The router on hosts A and B, the tool on C, the calls made on C: the
// router's queue group sends each request to A's router or B's, and each call's result
// comes back to the router that holds it — whichever host that is — once.
// A result forged by another capsule for a pending call is refused by the
// router holding the call.
func TestRouterOnTwoHostsAnswersEachCallOnce(t *testing.T) {
	m := newRouterMesh(t, "", true, false, blockForger())
	testutil.WaitFor(t, testTimeout, "the routers to learn forge_block's provider", func() bool {
		return slices.Contains(m.a.Dispatcher.ExactInterceptors("tool.v1.execute.forge_block"), "test-block-forger") &&
			slices.Contains(m.b.Dispatcher.ExactInterceptors("tool.v1.execute.forge_block"), "test-block-forger") &&
			slices.ContainsFunc(m.c.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool {
				return h.ID == "hostA" && slices.Contains(h.Capsules, routerID)
			})
	})
	caller := newRemoteCaller(t, m.c)
	forwardedA, forwardedB := m.a.NATSTransport().Stats().Forwarded, m.b.NATSTransport().Stats().Forwarded

	const calls = 40
	for i := range calls {
		caller.call(fmt.Sprintf("call-%d", i), "block", `{"wait":false}`)
	}
	seen := map[string]bool{}
	for range calls {
		r := caller.next()
		if r.Result.IsError || r.Result.Content != "served by hostC" || r.Result.CallID != r.CallID {
			t.Fatalf("call %s answered %+v", r.CallID, r.Result)
		}
		if seen[r.CallID] {
			t.Fatalf("call %s answered twice", r.CallID)
		}
		seen[r.CallID] = true
	}
	// Each call: the router that took it forwarded it, then published its
	// consolidated result; both hosts' routers took some.
	gotA := m.a.NATSTransport().Stats().Forwarded - forwardedA
	gotB := m.b.NATSTransport().Stats().Forwarded - forwardedB
	if gotA+gotB != 2*calls || gotA == 0 || gotB == 0 {
		t.Fatalf("router publishes: %d on A, %d on B; want %d in all, some on each", gotA, gotB, 2*calls)
	}

	// A pending call, and a forged result for it from another capsule.
	const pending = "call-pending"
	caller.call(pending, "block", `{"wait":true}`)
	if h := m.s.next(t, m.s.started, "started"); h != "hostC" {
		t.Fatalf("the waiting call ran on %s", h)
	}
	denials := m.a.Dispatcher.Stats().Denials + m.b.Dispatcher.Stats().Denials
	caller.call("call-forge", "forge_block", `{"call_id":"`+pending+`"}`)
	if r := caller.next(); r.CallID != "call-forge" || r.Result.IsError || r.Result.Content != "done" {
		t.Fatalf("the forger's own call answered %+v", r)
	}
	testutil.WaitFor(t, testTimeout, "the router holding the call to refuse the forged result", func() bool {
		return m.a.Dispatcher.Stats().Denials+m.b.Dispatcher.Stats().Denials > denials
	})
	m.release()
	if r := caller.next(); r.CallID != pending || r.Result.IsError || r.Result.Content != "released on hostC" {
		t.Fatalf("the pending call answered %+v, want its tool's own result", r)
	}
	// Nothing more: one more call's answer is the next thing on the topic.
	caller.call("call-last", "block", `{"wait":false}`)
	if r := caller.next(); r.CallID != "call-last" {
		t.Fatalf("after the last call: %+v (a result answered twice, or forged)", r)
	}
}

// (b) with the tool beside one of the routers (on A): a call B's router
// forwarded runs on A, whose own router sees the result first, through A's
// chain, and lets it go quietly (it does not hold the call); B's router
// takes it from the wire. Each call is answered once either way.
func TestRouterOnTwoHostsWithTheToolBesideOne(t *testing.T) {
	m := newRouterMesh(t, "", true, true)
	testutil.WaitFor(t, testTimeout, "host C to learn both routers", func() bool {
		routers := 0
		for _, h := range m.c.NATSTransport().Hosts() {
			if slices.Contains(h.Capsules, routerID) {
				routers++
			}
		}
		return routers == 2
	})
	caller := newRemoteCaller(t, m.c)
	forwardedB := m.b.NATSTransport().Stats().Forwarded
	deniedA := m.a.Dispatcher.Stats().Denials
	const calls = 40
	for i := range calls {
		caller.call(fmt.Sprintf("call-%d", i), "block", `{"wait":false}`)
	}
	seen := map[string]bool{}
	for range calls {
		r := caller.next()
		if r.Result.IsError || r.Result.Content != "served by hostA" || seen[r.CallID] {
			t.Fatalf("call %s answered %+v (answered before: %v)", r.CallID, r.Result, seen[r.CallID])
		}
		seen[r.CallID] = true
	}
	// B's router forwarded some calls and consolidated each of them.
	if got := m.b.NATSTransport().Stats().Forwarded - forwardedB; got == 0 || got%2 != 0 {
		t.Fatalf("host B's router published %d times: want some calls, each forwarded and answered", got)
	}
	// A's router let the results of B's calls go without a refusal: they
	// are the tool's own answers, held elsewhere (no warning per call).
	if got := m.a.Dispatcher.Stats().Denials - deniedA; got != 0 {
		t.Fatalf("host A counted %d denials for results another host's router holds", got)
	}
	caller.call("call-last", "block", `{"wait":false}`)
	if r := caller.next(); r.CallID != "call-last" {
		t.Fatalf("after the last call: %+v (a result answered twice)", r)
	}
}
