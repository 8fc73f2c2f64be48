package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// A reload whose new capsule fails to load keeps the running one: it still
// answers, its state stays ready, and its status says why the reload
// failed. (Before reloads were atomic, the old capsule was unloaded first
// and the failure left nothing running.)
func TestFailedReloadKeepsTheRunningCapsule(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("notes", contextCapsule("notes", "first"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Valid manifest, but the static engine cannot load the command file.
	f.install("notes", map[string]string{
		"Capsule.toml": manifestText("notes", "[[context_file]]\nname = \"notes\"\nfile = \"notes.md\"", "[[command]]\nname = \"c\"\nfile = \"c.toml\""),
		"c.toml":       "= broken",
		"notes.md":     "second",
	})
	err := f.rt.Reload(context.Background(), "notes")
	if err == nil || !strings.Contains(err.Error(), "the running capsule is kept") || !strings.Contains(err.Error(), "c.toml") {
		t.Fatalf("Reload = %v, want a failure that keeps the running capsule and names c.toml", err)
	}
	if s := f.status("notes"); s.State != "ready" || !strings.Contains(s.Error, "the running capsule is kept") {
		t.Errorf("status after a failed reload = %+v", s)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"first"`) {
		t.Errorf("the running capsule does not answer as before: %s", got)
	}
	// Fixed on disk: the next reload takes, and clears the error.
	f.install("notes", map[string]string{"c.toml": "prompt = \"ok\""})
	if err := f.rt.Reload(context.Background(), "notes"); err != nil {
		t.Fatal(err)
	}
	if s := f.status("notes"); s.State != "ready" || s.Error != "" {
		t.Errorf("status after the fixed reload = %+v", s)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"second"`) {
		t.Errorf("after the fixed reload: %s", got)
	}
}

// slowBuiltin provides the tool "slow": its first call waits until release
// is closed; every call answers with the instance that ran it.
func slowBuiltin(release <-chan struct{}, started chan<- struct{}) Builtin {
	var instances, calls atomic.Int32
	text := manifestText("slow",
		"[subscribe]",
		`"tool.v1.execute.slow" = { wit = "tool-execute-request", handler = "tool_execute_slow" }`,
		"[publish]",
		`"tool.v1.execute.slow.result" = "tool-execute-result"`)
	return Builtin{Manifest: []byte(text), New: func() *sdk.Capsule {
		instance := instances.Add(1)
		c := sdk.New("slow")
		sdk.Tool(c, "slow", "waits the first time", func(_ *sdk.Call, _ struct{}) (string, error) {
			if calls.Add(1) == 1 {
				started <- struct{}{}
				<-release
			}
			return "instance " + string(rune('0'+instance)), nil
		})
		return c
	}}
}

// A reload swaps instances without dropping a call: a call running on the
// old instance when the reload starts finishes there, with its result (not
// cancelled by an unload), and a call made while it runs is answered by the
// new instance.
func TestReloadServesThroughout(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	f := newFixture(t, []Builtin{slowBuiltin(release, started)}, Engines{})
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	caller := dispatch.Caller{Capsule: "caller", Principal: ipc.DefaultPrincipal}
	if err := f.d.Register(dispatch.CapsuleACL{ID: caller.Capsule, Publish: []string{"tool.v1.execute.slow"}, Subscribe: []string{"tool.v1.execute.slow.result"}}, silentTarget{}); err != nil {
		t.Fatal(err)
	}
	results, err := f.d.Subscribe(caller, "tool.v1.execute.slow.result", false)
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	call := func(id string) {
		t.Helper()
		p, _ := ipc.EncodePayload(ipc.ToolExecuteRequest{CallID: id, ToolName: "slow", Arguments: json.RawMessage(`{}`)})
		if _, err := f.d.Publish(caller, "tool.v1.execute.slow", p); err != nil {
			t.Fatal(err)
		}
	}
	call("first")
	<-started
	before, _ := f.rt.opts.Registry.Get("slow")
	reloaded := make(chan error, 1)
	go func() { reloaded <- f.rt.Reload(context.Background(), "slow") }()
	// The second call must reach the new instance while the first still
	// runs on the old one: wait until the registration has been swapped.
	testutil.WaitFor(t, waitLimit, "the reload to swap the instances", func() bool {
		now, _ := f.rt.opts.Registry.Get("slow")
		return now != before
	})
	call("second")
	got := map[string]ipc.ToolCallResult{}
	got["second"] = nextResult(t, results)["second"]
	close(release)
	for id, r := range nextResult(t, results) {
		got[id] = r
	}
	if err := <-reloaded; err != nil {
		t.Fatal(err)
	}
	if r := got["first"]; r.IsError || r.Content != "instance 1" {
		t.Errorf("the call running during the reload: %+v, want instance 1's answer", r)
	}
	if r := got["second"]; r.IsError || r.Content != "instance 2" {
		t.Errorf("the call made during the reload: %+v, want instance 2's answer", r)
	}
}

func nextResult(t *testing.T, r *bus.Route) map[string]ipc.ToolCallResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	d, err := r.Recv(ctx)
	if err != nil {
		t.Fatalf("no result: %v", err)
	}
	var res ipc.ToolExecuteResult
	if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &res); err != nil {
		t.Fatal(err)
	}
	return map[string]ipc.ToolCallResult{res.CallID: res.Result}
}
