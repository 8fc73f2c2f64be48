package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

func TestPublishStampsCallerAndReportsReach(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	rec := newRecorder()
	register(t, d, CapsuleACL{ID: "cli", Publish: []string{"user.v1.prompt"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "react", Subscribe: []string{"user.v1.*"},
		Interceptors: []Interceptor{{Pattern: "user.v1.prompt", Handler: "on_prompt"}}}, rec.cont())
	all, err := d.Subscribe(Caller{Capsule: "react", Principal: "alice"}, "user.v1.*", false)
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := d.Subscribe(Caller{Capsule: "react", Principal: "alice"}, "user.v1.prompt", true)
	if err != nil {
		t.Fatal(err)
	}
	systemOnly, err := d.Subscribe(Caller{Capsule: "react"}, "user.v1.prompt", true)
	if err != nil {
		t.Fatal(err)
	}

	if res := mustPublish(t, d, Caller{Capsule: "cli", Principal: "alice"}, "user.v1.prompt", `{"text":"hi"}`); res != (Result{Routes: 2, Interceptors: 1}) {
		t.Fatalf("alice: %+v, want 2 routes (all, scoped) and 1 interceptor", res)
	}
	if res := mustPublish(t, d, Caller{Capsule: "cli", Principal: "bob"}, "user.v1.prompt", `{}`); res != (Result{Routes: 1, Interceptors: 1}) {
		t.Fatalf("bob: %+v, want only the unscoped route", res)
	}
	if res := mustPublish(t, d, Caller{Capsule: "cli"}, "user.v1.prompt", `{}`); res != (Result{Routes: 2, Interceptors: 1}) {
		t.Fatalf("system: %+v, want the unscoped and system-only routes", res)
	}
	e := recvOne(t, scoped).Envelope
	if e.SourceID != "cli" || e.Principal != "alice" || string(e.Payload) != `{"text":"hi"}` || e.Seq == 0 {
		t.Fatalf("scoped route got %+v", e)
	}
	if e := recvOne(t, systemOnly).Envelope; e.Principal != "" || e.SourceID != "cli" {
		t.Fatalf("system-only route got %+v", e)
	}
	for _, want := range []string{"alice", "bob", ""} {
		if e := recvOne(t, all).Envelope; e.Principal != want {
			t.Fatalf("unscoped route got principal %q, want %q", e.Principal, want)
		}
	}
	calls := rec.wait(t, 3)
	principals := map[string]bool{}
	for _, c := range calls {
		principals[c.principal] = true
	}
	if len(principals) != 3 {
		t.Fatalf("interceptor principals = %v, want alice, bob and system", principals)
	}
}

func TestPublishKernelEvent(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	rec := newRecorder()
	register(t, d, CapsuleACL{ID: "obs", Subscribe: []string{"astrid.v1.*"},
		Interceptors: []Interceptor{{Pattern: "astrid.v1.capsules_loaded", Handler: "h"}}}, rec.cont())
	route, err := d.Subscribe(Caller{Capsule: "obs"}, "astrid.v1.*", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Publish(Caller{}, "astrid.v1.capsules_loaded", []byte(`{"type":"custom"}`), KernelEvent)
	if err != nil || res != (Result{Routes: 1, Interceptors: 1}) {
		t.Fatalf("kernel event = %+v, %v", res, err)
	}
	if e := recvOne(t, route).Envelope; e.SourceID != ipc.KernelSourceID || e.Principal != "" {
		t.Fatalf("kernel event stamped %q/%q", e.SourceID, e.Principal)
	}
	if c := rec.wait(t, 1)[0]; c.principal != "" {
		t.Fatalf("kernel event invoked as %q, want the system queue", c.principal)
	}
	for _, bad := range []struct {
		topic, payload string
		want           error
	}{
		{"astrid.v1.*", `{}`, ipc.ErrInvalidTopic},
		{"$SYS.x", `{}`, ipc.ErrInvalidTopic},
		{"astrid.v1.x", `{`, ErrInvalidPayload},
		{"astrid.v1.x", ``, ErrInvalidPayload},
	} {
		if _, err := d.Publish(Caller{}, bad.topic, []byte(bad.payload), KernelEvent); !errors.Is(err, bad.want) {
			t.Errorf("kernel event (%q, %q) = %v, want %v", bad.topic, bad.payload, err, bad.want)
		}
	}
}

func TestPublishRefusesInvalidPayload(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"a.b"}}, continueTarget)
	for _, p := range []string{``, `{`, `{} {}`, `nope`, "\"\xff\""} {
		if _, err := d.Publish(Caller{Capsule: "pub"}, "a.b", []byte(p)); !errors.Is(err, ErrInvalidPayload) {
			t.Errorf("payload %q: %v, want ErrInvalidPayload", p, err)
		}
	}
	if s := d.Stats(); s.Published != 0 || s.Invalid != 5 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestClosedRoutesAreForgotten: subscriptions a handler opens and closes do
// not accumulate in the capsule's record.
func TestClosedRoutesAreForgotten(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "pb", Subscribe: []string{"tool.v1.response.describe.*"}}, continueTarget)
	keep, err := d.Subscribe(Caller{Capsule: "pb"}, "tool.v1.response.describe.*", false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 * minRoutePrune {
		r, err := d.Subscribe(Caller{Capsule: "pb", Principal: fmt.Sprintf("p%d", i)}, "tool.v1.response.describe.*", true)
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	c := (*d.capsules.Load())["pb"]
	c.mu.Lock()
	tracked := len(c.routes)
	_, kept := c.routes[keep]
	c.mu.Unlock()
	if tracked > 2*minRoutePrune || !kept {
		t.Fatalf("%d routes tracked (open route kept: %v), want at most %d", tracked, kept, 2*minRoutePrune)
	}
}

// A publish takes at most one kind: two are refused, nothing delivered.
func TestPublishTakesOneKind(t *testing.T) {
	d, b := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"a.b"}}, continueTarget)
	r, err := b.Subscribe(bus.RouteSpec{Owner: "watch", Pattern: "a.b"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	from := Caller{Capsule: "pub", Principal: "default"}
	if _, err := d.Publish(from, "a.b", json.RawMessage(`{}`), Event, FailureOf("")); err == nil {
		t.Fatal("two kinds accepted")
	}
	if res, err := d.Publish(from, "a.b", json.RawMessage(`{}`), Event); err != nil || res.Routes != 1 {
		t.Fatalf("one kind: %+v, %v", res, err)
	}
	if res, err := d.Publish(from, "a.b", json.RawMessage(`{}`)); err != nil || res.Routes != 1 {
		t.Fatalf("no kind (an event): %+v, %v", res, err)
	}
	if _, ok := r.TryRecv(); !ok {
		t.Fatal("nothing delivered")
	}
	r.TryRecv()
	if _, ok := r.TryRecv(); ok {
		t.Fatal("the refused publish was delivered")
	}
}
