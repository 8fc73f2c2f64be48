package host

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type nopTarget struct{}

func (nopTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, nil
}

type fixture struct {
	deps  Deps
	homes string
	ws    string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	b := bus.New(bus.Options{})
	d := dispatch.New(b, dispatch.Options{})
	st, err := store.Open(filepath.Join(t.TempDir(), "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(); b.Close(); st.Close() })
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	homes, _ := filepath.EvalSymlinks(t.TempDir())
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	return fixture{
		deps:  Deps{Dispatcher: d, Store: st, Cancels: NewCancels(), Logger: logger, Workspace: ws, HomesDir: homes, Bus: b},
		homes: homes, ws: ws,
	}
}

// capsule loads a manifest, registers its ACL and binds a host to it.
func (f fixture) capsule(t *testing.T, toml string) *Capsule {
	t.Helper()
	m, diags := manifest.Parse([]byte(toml), "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	if err := f.deps.Dispatcher.Register(dispatch.CapsuleACL{ID: m.ID(), Publish: m.PublishPatterns(), Subscribe: m.SubscribePatterns()}, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	c, err := NewCapsule(f.deps, m, t.TempDir(), map[string]string{"GREETING": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const homeCapsule = `
[package]
name = "notes"
version = "0.1.0"
[capabilities]
fs_read = ["home://"]
fs_write = ["home://"]
[publish]
"notes.v1.saved" = "opaque"
[subscribe]
"notes.v1.reply.*" = "opaque"
`

func TestHomeIsThePrincipalsOwn(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	alice, _ := c.Begin(context.Background(), "alice")
	defer alice.End()
	if err := alice.FSWrite("home://diary.txt", []byte("alice's")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(f.homes, "alice", "diary.txt")); err != nil || string(b) != "alice's" {
		t.Fatalf("alice's file: %q %v", b, err)
	}
	bob, _ := c.Begin(context.Background(), "bob")
	defer bob.End()
	for _, p := range []string{"home://diary.txt", "home://../alice/diary.txt", filepath.Join(f.homes, "alice", "diary.txt")} {
		if data, err := bob.FSRead(p); err == nil && string(data) == "alice's" {
			t.Errorf("bob read alice's file through %q", p)
		}
	}
	if _, err := bob.FSRead("/etc/passwd"); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Errorf("/etc/passwd: %v, want denied", err)
	}
}

// A symlink planted where a granted directory's content should be cannot
// lead out, for reads and for writes.
func TestSymlinksInsideAGrantDoNotLeadOut(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(f.homes, "carol")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(home, "notes")); err != nil {
		t.Fatal(err)
	}
	call, _ := c.Begin(context.Background(), "carol")
	defer call.End()
	if data, err := call.FSRead("home://notes/secret"); err == nil {
		t.Fatalf("read through a planted symlink: %q", data)
	}
	if err := call.FSWrite("home://notes/new", []byte("x")); err == nil {
		t.Fatal("wrote through a planted symlink")
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Fatal("a file appeared outside the grant")
	}
}

func TestFailureReplyMustBePublishable(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()
	if err := call.SetFailureReply("agent.v1.response", []byte(`{}`)); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Errorf("failure reply outside [publish]: %v, want denied", err)
	}
	if err := call.SetFailureReply("notes.v1.saved", []byte(`{"ok":false}`)); err != nil {
		t.Fatal(err)
	}
}

func TestFailureReplyIsPublishedOnceOnFailure(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	obs := busRoute(t, f, "notes.v1.saved")
	call, _ := c.Begin(context.Background(), "alice")
	if err := call.SetFailureReply("notes.v1.saved", []byte(`{"ok":false}`)); err != nil {
		t.Fatal(err)
	}
	call.Fail(errors.New("trap"))
	call.Fail(errors.New("again")) // the reply is spent
	call.End()
	d, err := obs.Recv(ctxTimeout(t))
	if err != nil {
		t.Fatal(err)
	}
	if d.Envelope.SourceID != "notes" || d.Envelope.Principal != "alice" || string(d.Envelope.Payload) != `{"ok":false}` {
		t.Errorf("failure reply: %+v", d.Envelope)
	}
	if _, ok := obs.TryRecv(); ok {
		t.Error("failure reply published twice")
	}

	// A call that answered on the failure reply's topic has no failure reply left.
	call2, _ := c.Begin(context.Background(), "alice")
	_ = call2.SetFailureReply("notes.v1.saved", []byte(`{"ok":false}`))
	if err := call2.Publish("notes.v1.saved", []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	call2.Fail(errors.New("late"))
	call2.End()
	d, err = obs.Recv(ctxTimeout(t))
	if err != nil || string(d.Envelope.Payload) != `{"ok":true}` {
		t.Fatalf("answer: %v %s", err, d.Envelope.Payload)
	}
	if _, ok := obs.TryRecv(); ok {
		t.Error("a call that answered also published its failure reply")
	}
}

func busRoute(t *testing.T, f fixture, pattern string) *bus.Route {
	t.Helper()
	if err := f.deps.Dispatcher.Register(dispatch.CapsuleACL{ID: "observer", Subscribe: []string{pattern}}, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	r, err := f.deps.Dispatcher.Subscribe(dispatch.Caller{Capsule: "observer"}, pattern, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSubscriptionsEndWithTheCallAndRecvTimesOut(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	call, _ := c.Begin(context.Background(), "alice")
	sub, err := call.Subscribe("notes.v1.reply.*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call.Subscribe("agent.v1.*"); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Errorf("subscribe outside [subscribe]: %v", err)
	}
	if _, err := call.Recv(sub, time.Millisecond); hostapi.CodeOf(err) != hostapi.CodeTimeout {
		t.Errorf("recv on an empty subscription: %v, want timeout", err)
	}
	if _, ok, err := call.Poll(sub); ok || err != nil {
		t.Errorf("poll: %v %v", ok, err)
	}
	if err := call.Publish("notes.v1.elsewhere", []byte(`{}`)); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Errorf("publish outside [publish]: %v", err)
	}
	if err := call.Publish("notes.v1.saved", []byte(`not json`)); hostapi.CodeOf(err) != hostapi.CodeInvalid {
		t.Errorf("publish of invalid JSON: %v", err)
	}
	if v, ok := call.Config("GREETING"); !ok || v != "hi" {
		t.Errorf("config: %q %v", v, ok)
	}
	call.End()
	if _, err := call.Recv(sub, time.Second); err == nil {
		t.Error("a subscription outlived its call")
	}
	if err := call.Publish("notes.v1.saved", []byte(`{}`)); hostapi.CodeOf(err) != hostapi.CodeCancelled {
		t.Errorf("publish after the call ended: %v", err)
	}
}

func TestCancelKeyInterruptsTheCall(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	call, ctx := c.Begin(context.Background(), "alice")
	defer call.End()
	if err := call.SetCancelKey("call_1"); err != nil {
		t.Fatal(err)
	}
	sub, err := call.Subscribe("notes.v1.reply.*")
	if err != nil {
		t.Fatal(err)
	}
	if n := f.deps.Cancels.Cancel(errors.New("user pressed stop"), "call_2"); n != 0 {
		t.Errorf("cancelled %d calls for an unknown key", n)
	}
	go f.deps.Cancels.Cancel(errors.New("user pressed stop"), "call_1")
	if _, err := call.Recv(sub, 30*time.Second); hostapi.CodeOf(err) != hostapi.CodeCancelled {
		t.Errorf("recv during cancel: %v, want cancelled", err)
	}
	if ctx.Err() == nil {
		t.Error("the call's context was not cancelled")
	}
}

func TestKVIsPerPrincipal(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	a, _ := c.Begin(context.Background(), "alice")
	defer a.End()
	b, _ := c.Begin(context.Background(), "bob")
	defer b.End()
	if err := a.KVSet("k", []byte("alice")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.KVGet("k"); ok {
		t.Error("bob sees alice's key")
	}
	if keys, _ := a.KVList(""); len(keys) != 1 {
		t.Errorf("alice's keys: %v", keys)
	}
	if n, _ := b.KVClear(""); n != 0 {
		t.Errorf("bob cleared %d of alice's keys", n)
	}
	if v, ok, _ := a.KVGet("k"); !ok || string(v) != "alice" {
		t.Errorf("alice's key: %q %v", v, ok)
	}
}
