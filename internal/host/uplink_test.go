package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

const uplinkCapsule = `
[package]
name = "up"
version = "0.1.0"
[capabilities]
uplink = true
net_bind = ["unix:run://u.sock", "127.0.0.1:*"]
[publish]
"user.v1.prompt" = "opaque"
"astrid.v1.approval.response.*" = "opaque"
[subscribe]
"agent.v1.*" = "opaque"
`

// An uplink publishes and subscribes for the person its peer maps to,
// under its own ACL; no other capsule may, and a principal must be one.
func TestUplinkActsForAPrincipal(t *testing.T) {
	f := newFixture(t)
	f.deps.UplinkActsFor = func(capsule, principal string) bool { return capsule == "up" && principal == "alice" }
	up := f.capsule(t, uplinkCapsule)
	plain := f.capsule(t, strings.Replace(strings.Replace(uplinkCapsule, "uplink = true\n", "", 1), `name = "up"`, `name = "plain"`, 1))
	call, _ := up.Begin(context.Background(), "")
	defer call.End()

	seen := busRoute(t, f, "user.v1.prompt")
	if err := call.PublishAs("alice", "user.v1.prompt", []byte(`{"text":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	d, err := seen.Recv(ctxTimeout(t))
	if err != nil {
		t.Fatal(err)
	}
	if d.Envelope.Principal != "alice" || d.Envelope.SourceID != "up" {
		t.Fatalf("published as %q from %q, want alice from up", d.Envelope.Principal, d.Envelope.SourceID)
	}

	sub, err := call.SubscribeAs("alice", "agent.v1.*", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bob", "alice"} {
		if _, err := f.deps.Dispatcher.Publish(dispatch.Caller{Principal: p}, "agent.v1.response", json.RawMessage(`{"who":"`+p+`"}`), dispatch.KernelEvent); err != nil {
			t.Fatal(err)
		}
	}
	m, err := call.Recv(sub, time.Minute)
	if err != nil || m.Principal != "alice" {
		t.Fatalf("the scoped subscription got %+v, %v; want alice's event only", m, err)
	}
	if _, ok, _ := call.Poll(sub); ok {
		t.Fatal("bob's event reached alice's subscription")
	}

	for _, tc := range []struct {
		name string
		err  error
		code hostapi.Code
	}{
		{"publish outside the ACL", call.PublishAs("alice", "tool.v1.request.execute", []byte(`{}`)), hostapi.CodeDenied},
		{"empty principal", call.PublishAs("", "user.v1.prompt", []byte(`{}`)), hostapi.CodeInvalid},
		{"principal with a dot", call.PublishAs("al.ice", "user.v1.prompt", []byte(`{}`)), hostapi.CodeInvalid},
		{"subscribe outside the ACL", subErr(call.SubscribeAs("alice", "tool.v1.*", nil)), hostapi.CodeDenied},
		// The operator let it act for alice only.
		{"publish for a principal not mapped", call.PublishAs("bob", "user.v1.prompt", []byte(`{}`)), hostapi.CodeDenied},
		{"subscribe for a principal not mapped", subErr(call.SubscribeAs("bob", "agent.v1.*", nil)), hostapi.CodeDenied},
		{"scope for a principal not mapped", scopeErr(call.OpenScope("bob", hostapi.Scope{PeerUID: -1})), hostapi.CodeDenied},
		{"publish in a scope for a principal not mapped", call.PublishIn("bob", 0, "user.v1.prompt", []byte(`{}`)), hostapi.CodeDenied},
	} {
		if hostapi.CodeOf(tc.err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, tc.err, tc.code)
		}
	}

	pc, _ := plain.Begin(context.Background(), "")
	defer pc.End()
	if err := pc.PublishAs("alice", "user.v1.prompt", []byte(`{}`)); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Errorf("a capsule without uplink = true published as alice: %v", err)
	}
	if _, err := pc.SubscribeAs("alice", "agent.v1.*", nil); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Errorf("a capsule without uplink = true subscribed as alice: %v", err)
	}
}

func subErr(_ hostapi.SubscriptionID, err error) error { return err }

func scopeErr(_ uint64, _ string, err error) error { return err }

// An installed uplink the operator mapped to no one acts for no one; a
// built-in one (ActForAnyone) for anyone, as the CLI uplink maps its
// peers itself.
func TestAnUplinkActsOnlyForThePrincipalsItWasGiven(t *testing.T) {
	f := newFixture(t)
	up := f.capsule(t, uplinkCapsule)
	call, _ := up.Begin(context.Background(), "")
	defer call.End()
	err := call.PublishAs("alice", "user.v1.prompt", []byte(`{}`))
	if hostapi.CodeOf(err) != hostapi.CodeDenied || !strings.Contains(err.Error(), `acts_for = ["up=alice"]`) {
		t.Fatalf("an uplink mapped to no one published as alice: %v (want denied, naming the config key)", err)
	}
	up.ActForAnyone()
	if err := call.PublishAs("mallory", "user.v1.prompt", []byte(`{}`)); err != nil {
		t.Fatalf("a built-in uplink acting for a principal: %v", err)
	}
}

// An uplink holds a listener and many clients; any other capsule 8 handles.
func TestUplinkHoldsMoreSockets(t *testing.T) {
	f := newFixture(t)
	up := f.capsule(t, uplinkCapsule)
	defer up.Close()
	call, _ := up.Begin(context.Background(), "")
	defer call.End()
	for i := range hostapi.MaxNetHandles + 4 {
		if _, err := call.NetBind("127.0.0.1:0"); err != nil {
			t.Fatalf("handle %d of an uplink: %v", i+1, err)
		}
	}
}

// run:// resolves to the kernel's run directory, created private.
func TestUplinkBindsInTheRunDirectory(t *testing.T) {
	f := newFixture(t)
	run := filepath.Join(t.TempDir(), "run")
	f.deps.RunDir = run
	up := f.capsule(t, uplinkCapsule)
	defer up.Close()
	call, _ := up.Begin(context.Background(), "")
	defer call.End()
	ln, err := call.NetBind("unix:run://u.sock")
	if err != nil {
		t.Fatal(err)
	}
	if ln.Addr != "unix:"+run+"/u.sock" {
		t.Fatalf("bound %s", ln.Addr)
	}
	if fi, err := os.Stat(run); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("run directory: %v, %v", fi.Mode(), err)
	}
	if _, err := call.NetBind("unix:run://other.sock"); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Fatalf("another socket in run/: %v", err)
	}
}

// The host approval call takes an answer relayed by a loaded uplink (for
// the asking principal: the route is scoped), and not one from a capsule
// that merely may publish answers.
func TestHostApprovalAcceptsAnUplinkRelay(t *testing.T) {
	for _, tc := range []struct {
		name     string
		uplink   bool
		answered bool
	}{{"uplink", true, true}, {"plain capsule", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.deps.Approvals = ask.NewApprovals([]string{"astrid-cli"}, 200*time.Millisecond)
			toml := uplinkCapsule
			if !tc.uplink {
				toml = strings.Replace(toml, "uplink = true\n", "", 1)
			}
			f.deps.UplinkActsFor = func(string, string) bool { return true }
			loaded := map[string]manifest.Capabilities{}
			f.deps.Grants = func(id string) (manifest.Capabilities, bool) { c, ok := loaded[id]; return c, ok }
			relay := f.capsule(t, toml)
			loaded["up"] = manifest.Capabilities{Uplink: tc.uplink}
			asker := f.capsule(t, shellLike)
			if err := f.deps.Dispatcher.Register(dispatch.CapsuleACL{ID: "astrid-cli", Subscribe: []string{ipc.ApprovalRequestTopic}}, nopTarget{}); err != nil {
				t.Fatal(err)
			}
			questions, err := f.deps.Dispatcher.Subscribe(dispatch.Caller{Capsule: "astrid-cli", Principal: "alice"}, ipc.ApprovalRequestTopic, true)
			if err != nil {
				t.Fatal(err)
			}
			defer questions.Close()
			// The plain capsule answers as alice herself, through its own
			// [publish] grant: allowed on the bus, not counted as a person.
			rc, _ := relay.Begin(context.Background(), "alice")
			defer rc.End()
			answer := func(topic string, payload []byte) error {
				if tc.uplink {
					return rc.PublishAs("alice", topic, payload)
				}
				return rc.Publish(topic, payload)
			}
			published := make(chan error, 1)
			go func() {
				d, err := questions.Recv(context.Background())
				if err != nil {
					return
				}
				var q ipc.ApprovalRequired
				_ = json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &q)
				published <- answer(ipc.ApprovalResponseTopic(q.RequestID), []byte(`{"request_id":"`+q.RequestID+`","decision":"approve"}`))
			}()
			call, _ := asker.Begin(context.Background(), "alice")
			defer call.End()
			ok, err := call.RequestApproval("run", "ls")
			if tc.answered && (!ok || err != nil) {
				t.Fatalf("the uplink's relay was not taken: %v, %v", ok, err)
			}
			if !tc.answered && hostapi.CodeOf(err) != hostapi.CodeTimeout {
				t.Fatalf("a plain capsule's answer counted: %v, %v", ok, err)
			}
			if err := <-published; err != nil {
				t.Fatalf("the answer was not published: %v", err)
			}
		})
	}
}

const shellLike = `
[package]
name = "asker"
version = "0.1.0"
`
