package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

func TestLoadPutsToolsOnTheBus(t *testing.T) {
	r := newRig(t, fakeManifest(t, ""), Options{})
	var names []string
	mutable := map[string]bool{}
	for _, d := range r.engine.Tools() {
		names = append(names, d.Name)
		mutable[d.Name] = d.Mutable
		if !json.Valid(d.InputSchema) || !strings.Contains(string(d.InputSchema), `"object"`) {
			t.Errorf("%s: input schema %s", d.Name, d.InputSchema)
		}
	}
	slices.Sort(names)
	want := []string{"fake:block", "fake:crash", "fake:echo", "fake:env", "fake:fail", "fake:grow", "fake:spawn", "fake:where", "fake:write"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools on the bus = %v, want %v (bad.name and the hook tool left off)", names, want)
	}
	if mutable["fake:echo"] || !mutable["fake:spawn"] {
		t.Fatalf("mutable flags %v: echo is annotated read-only, spawn is not annotated", mutable)
	}
	contains(t, "logs", r.logs.String(), "bad.name")

	s := r.engine.Surface()
	for _, n := range want {
		if !slices.Contains(s.Publish, ipc.ToolResultTopic(n)) || !slices.Contains(s.Subscribe, ipc.ToolExecuteTopic(n)) {
			t.Errorf("surface misses the grants of %s: %+v", n, s)
		}
	}
	if !slices.Contains(s.Publish, ipc.ToolDescribeResponseTopic("fake-capsule")) {
		t.Errorf("surface misses the describe response grant: %v", s.Publish)
	}
	for _, p := range append(s.Publish, s.Subscribe...) {
		if err := ipc.ValidateTopic(p); err != nil {
			t.Errorf("surface topic %q: %v", p, err)
		}
	}

	// The describe protocol answers with the same tools.
	sub, err := r.d.Subscribe(dispatch.Caller{Capsule: clientID, Principal: ipc.DefaultPrincipal}, ipc.ToolDescribeResponsePattern, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := r.d.Publish(dispatch.Caller{Capsule: clientID, Principal: ipc.DefaultPrincipal}, ipc.ToolRequestDescribeTopic, json.RawMessage("{}")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	d, err := sub.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ipc.ParseToolDescribeResponse(d.Envelope.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if d.Envelope.SourceID != "fake-capsule" || len(resp.Tools) != len(want) || resp.Description != "A fake MCP capsule" {
		t.Fatalf("describe answer from %s: %+v", d.Envelope.SourceID, resp)
	}
}

func TestToolCalls(t *testing.T) {
	r := newRig(t, fakeManifest(t, ""), Options{Env: map[string]string{"CAPSULE_REGION": "eu-west-1"}})
	t.Setenv("ASTRID_MCP_TEST_LEAK", "must-not-reach-the-server")
	tests := []struct {
		name, tool, args string
		isError          bool
		want             string
	}{
		{"text result", "fake:echo", `{"text":"hello"}`, false, "hello"},
		{"null arguments", "fake:echo", `null`, false, ""},
		{"tool error is an error result", "fake:fail", `{}`, true, "it broke"},
		{"capsule [env] reaches the server", "fake:env", `{"text":"CAPSULE_REGION"}`, false, "true:eu-west-1"},
		{"astrid's own environment does not", "fake:env", `{"text":"ASTRID_MCP_TEST_LEAK"}`, false, "false:"},
		{"PATH is inherited", "fake:env", `{"text":"PATH"}`, false, "true:/"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r.roundTrip(tt.tool, "call-"+strconv.Itoa(i), tt.args)
			if res.IsError != tt.isError {
				t.Fatalf("is_error = %v, want %v (content %q)", res.IsError, tt.isError, res.Content)
			}
			contains(t, "content", res.Content, tt.want)
			r.noMoreResults()
		})
	}
}

// TestCancelSendsMCPCancellation: a cancel key interrupts the call at once
// with an error result, and MCP's notifications/cancelled goes on the wire
// for the request, which the server sees.
func TestCancelSendsMCPCancellation(t *testing.T) {
	r := newRig(t, fakeManifest(t, ""), Options{})
	r.call("fake:block", "call-cancel", `{}`)
	// Cancelled before its handler runs, a request is dropped unseen; wait
	// until the server is inside it.
	waitFor(t, "the server to start the call", func() bool { return strings.Contains(r.logs.String(), "fake: block started") })
	waitFor(t, "the cancel key", func() bool { return r.cancels.Cancel(errors.New("user pressed stop"), "call-cancel") == 1 })
	topic, _, res := r.result()
	if topic != ipc.ToolResultTopic("fake:block") || res.CallID != "call-cancel" || !res.Result.IsError {
		t.Fatalf("result %s %+v, want an error result for call-cancel", topic, res)
	}
	contains(t, "content", res.Result.Content, "cancelled")
	waitFor(t, "notifications/cancelled on the wire", func() bool {
		return wireHas(r.wire.String(), "write: ", `"method":"notifications/cancelled"`)
	})
	waitFor(t, "the server to see the cancellation", func() bool {
		return strings.Contains(r.logs.String(), "fake: block was cancelled")
	})
	r.noMoreResults()
	// The server is fine afterwards.
	if res := r.roundTrip("fake:echo", "after", `{"text":"still here"}`); res.Content != "still here" {
		t.Fatalf("after cancel: %+v", res)
	}
}

// wireHas reports whether some wire log line starts with dir and holds s.
func wireHas(wire, dir, s string) bool {
	for _, line := range strings.Split(wire, "\n") {
		if strings.HasPrefix(line, dir) && strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// TestServerDeathMidCall: a server that dies during a call answers it with
// the failure reply, is restarted, and serves the next call.
func TestServerDeathMidCall(t *testing.T) {
	tests := []struct {
		name string
		kill func(t *testing.T, r *rig)
	}{
		{"the server exits", func(t *testing.T, r *rig) { r.call("fake:crash", "doomed", `{}`) }},
		{"the server is killed", func(t *testing.T, r *rig) {
			r.call("fake:block", "doomed", `{}`)
			waitFor(t, "the server to start the call", func() bool { return strings.Contains(r.logs.String(), "fake: block started") })
			if err := syscall.Kill(r.engine.current().pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, fakeManifest(t, ""), Options{RestartBackoff: 10 * 1e6})
			first := r.engine.current().pid
			tt.kill(t, r)
			_, _, res := r.result()
			if res.CallID != "doomed" || !res.Result.IsError {
				t.Fatalf("result %+v, want the failure reply for the doomed call", res)
			}
			contains(t, "content", res.Result.Content, "stopped during the call")
			r.noMoreResults()
			waitFor(t, "the restart", func() bool { return r.engine.Restarts() == 1 && r.engine.current() != nil })
			if h := r.comp.Health(); h.State != capsule.Ready {
				t.Fatalf("health after restart: %+v", h)
			}
			if r.engine.current().pid == first {
				t.Fatal("the restarted server has the dead one's pid")
			}
			if res := r.roundTrip("fake:echo", "next", `{"text":"back"}`); res.IsError || res.Content != "back" {
				t.Fatalf("after restart: %+v", res)
			}
		})
	}
}

func TestCallWhileDownIsAnsweredNotHeld(t *testing.T) {
	// A backoff longer than the test: the server stays down.
	r := newRig(t, fakeManifest(t, ""), Options{RestartBackoff: MaxRestartBackoff})
	r.call("fake:crash", "doomed", `{}`)
	if _, _, res := r.result(); !res.Result.IsError {
		t.Fatalf("crash: %+v", res)
	}
	waitFor(t, "the server to be down", func() bool { return r.engine.current() == nil })
	res := r.roundTrip("fake:echo", "while-down", `{"text":"x"}`)
	if !res.IsError {
		t.Fatalf("call while down: %+v", res)
	}
	contains(t, "content", res.Content, "being restarted")
}

// TestUnloadKillsTheProcessGroup: a helper the server started in its group
// dies with it on Unload.
func TestUnloadKillsTheProcessGroup(t *testing.T) {
	r := newRig(t, fakeManifest(t, ""), Options{})
	res := r.roundTrip("fake:spawn", "spawn", `{}`)
	pid, err := strconv.Atoi(res.Content)
	if err != nil {
		t.Fatalf("spawn: %+v", res)
	}
	if !alive(pid) {
		t.Fatalf("grandchild %d is not running", pid)
	}
	leader := r.engine.current().pid
	if err := r.comp.Unload(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the grandchild to die", func() bool { return !alive(pid) })
	if alive(leader) {
		t.Fatalf("server %d still running after Unload", leader)
	}
	if n := KillAll(); n != 0 {
		t.Fatalf("KillAll found %d groups after Unload", n)
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

func TestInterceptors(t *testing.T) {
	m := fakeManifest(t, `
[subscribe]
"hook.v1.a" = { wit = "opaque", handler = "hook_deny" }
"hook.v1.b" = { wit = "opaque", handler = "hook_final" }
"hook.v1.c" = { wit = "opaque", handler = "hook_rewrite" }
"hook.v1.d" = { wit = "opaque", handler = "hook_pass" }
"hook.v1.e" = { wit = "opaque", handler = "hook_error" }
`)
	r := newRig(t, m, Options{})
	tests := []struct {
		handler string
		want    hostapi.Verdict
		wantErr bool
	}{
		{"hook_deny", hostapi.Verdict{Action: hostapi.Deny, Reason: "no thanks"}, false},
		{"hook_final", hostapi.Verdict{Action: hostapi.Final}, false},
		{"hook_rewrite", hostapi.Verdict{Action: hostapi.Continue, Payload: []byte(`{"seen":{"n":1}}`)}, false},
		{"hook_pass", hostapi.Verdict{Action: hostapi.Continue}, false},
		{"hook_error", hostapi.Verdict{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.handler, func(t *testing.T) {
			v, err := r.comp.Invoke(context.Background(), hostapi.Invocation{Handler: tt.handler, Topic: "hook.v1.x", Principal: "default", Payload: []byte(`{"n":1}`)})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if v.Action != tt.want.Action || v.Reason != tt.want.Reason || string(v.Payload) != string(tt.want.Payload) {
				t.Fatalf("verdict %+v (payload %s), want %+v (payload %s)", v, v.Payload, tt.want, tt.want.Payload)
			}
		})
	}
	// A handler the manifest does not bind is not this engine's.
	if _, err := r.engine.Invoke(context.Background(), hostapi.Invocation{Handler: "not_bound", Payload: []byte(`{}`)}); !errors.Is(err, capsule.ErrNotSupported) {
		t.Fatalf("unbound handler: %v", err)
	}
}

func TestVerdictOf(t *testing.T) {
	tests := []struct {
		text    string
		want    hostapi.Verdict
		wantErr bool
	}{
		{"", hostapi.Verdict{Action: hostapi.Continue}, false},
		{" null ", hostapi.Verdict{Action: hostapi.Continue}, false},
		{`{"action":"continue"}`, hostapi.Verdict{Action: hostapi.Continue}, false},
		{`{"action":"continue","payload":null}`, hostapi.Verdict{Action: hostapi.Continue}, false},
		{`{"action":"continue","payload":[1]}`, hostapi.Verdict{Action: hostapi.Continue, Payload: []byte(`[1]`)}, false},
		{`{"action":"final","payload":{"a":1}}`, hostapi.Verdict{Action: hostapi.Final, Payload: []byte(`{"a":1}`)}, false},
		{`{"action":"deny"}`, hostapi.Verdict{Action: hostapi.Deny, Reason: "denied by MCP hook"}, false},
		{`{"action":"deny","reason":"r"}`, hostapi.Verdict{Action: hostapi.Deny, Reason: "r"}, false},
		{`{"action":"explode"}`, hostapi.Verdict{}, true},
		// Upstream's only answer: the replacement payload itself.
		{`{"replaced":true}`, hostapi.Verdict{Action: hostapi.Continue, Payload: []byte(`{"replaced":true}`)}, false},
		{`plain text`, hostapi.Verdict{Action: hostapi.Continue, Payload: []byte(`plain text`)}, false},
	}
	for _, tt := range tests {
		v, err := verdictOf(tt.text)
		if (err != nil) != tt.wantErr || v.Action != tt.want.Action || v.Reason != tt.want.Reason || string(v.Payload) != string(tt.want.Payload) {
			t.Errorf("verdictOf(%q) = %+v (%s), %v; want %+v (%s)", tt.text, v, v.Payload, err, tt.want, tt.want.Payload)
		}
	}
}

// TestServerGivesUpAfterMaxRestarts: a server that keeps dying young is
// restarted MaxRestarts times in a row, then the engine fails with
// capsule.ErrGaveUp (the health monitor's final give-up, shared policy)
// and starts no more processes.
func TestServerGivesUpAfterMaxRestarts(t *testing.T) {
	r := newRig(t, fakeManifest(t, ""), Options{RestartBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxRestarts: 2})
	for i := range 3 {
		// The i-th generation, not the one that just died: under load the
		// supervisor may not yet have noticed the last crash, and a call on
		// the dead generation would not crash a new one.
		waitFor(t, fmt.Sprintf("generation %d live", i), func() bool { return r.engine.current() != nil && r.engine.Restarts() == i })
		r.call("fake:crash", fmt.Sprintf("doomed-%d", i), `{}`)
		if _, _, res := r.result(); !res.Result.IsError {
			t.Fatalf("crash %d: %+v", i, res)
		}
	}
	waitFor(t, "the engine to give up", func() bool { return r.engine.Health().State == capsule.Failed })
	h := r.engine.Health()
	if !errors.Is(h.Err, capsule.ErrGaveUp) || !strings.Contains(h.Err.Error(), "died 3 times in a row") {
		t.Fatalf("health after the give-up: %+v", h)
	}
	if n := r.engine.Restarts(); n != 2 {
		t.Fatalf("restarts = %d, want 2", n)
	}
	if !strings.Contains(r.logs.String(), "gave up restarting it") {
		t.Fatalf("the log does not say it gave up:\n%s", r.logs)
	}
	if r.engine.current() != nil {
		t.Fatal("a server runs after the give-up")
	}
}
