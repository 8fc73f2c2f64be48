package dispatch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

func TestPublishACL(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{
		ID:      "router",
		Publish: []string{"tool.v1.execute.*", "tool.v1.execute.result", "agent.v1.response"},
	}, continueTarget)
	register(t, d, CapsuleACL{ID: "mute"}, continueTarget)
	register(t, d, CapsuleACL{ID: "mid", Publish: []string{"a.*.c"}}, continueTarget)

	long := strings.Repeat("a", ipc.MaxTopicBytes-len("tool.v1.execute.")+1)
	tests := []struct {
		name    string
		capsule string
		topic   string
		want    error // nil: accepted
	}{
		{"exact key", "router", "agent.v1.response", nil},
		{"trailing wildcard, one segment", "router", "tool.v1.execute.fs", nil},
		// A trailing `.*` in an ACL covers the subtree (DESIGN §4b), so the
		// injected name lands inside the granted subtree and nowhere else.
		{"trailing wildcard, injected subtree", "router", "tool.v1.execute.x.y", nil},
		{"sibling of the granted subtree", "router", "tool.v1.request.execute", ErrDenied},
		{"parent of the granted subtree", "router", "tool.v1.execute", ErrDenied},
		{"prefix is not a segment", "router", "tool.v1.executex.y", ErrDenied},
		{"unrelated topic", "router", "agent.v1.responses", ErrDenied},
		{"empty ACL denies everything", "mute", "agent.v1.response", ErrDenied},
		{"mid wildcard, one segment", "mid", "a.b.c", nil},
		{"mid wildcard is one segment only", "mid", "a.b.x.c", ErrDenied},
		{"mid wildcard, too short", "mid", "a.c", ErrDenied},
		{"wildcard in a published topic", "router", "tool.v1.execute.*", ipc.ErrInvalidTopic},
		{"$SYS prefix", "router", "$SYS.tool", ipc.ErrInvalidTopic},
		{"_INBOX prefix", "router", "_INBOX.tool.v1.execute.x", ipc.ErrInvalidTopic},
		{"NATS full wildcard", "router", "tool.v1.execute.>", ipc.ErrInvalidTopic},
		{"empty segment", "router", "tool.v1.execute..x", ipc.ErrInvalidTopic},
		{"leading dot", "router", ".tool.v1.execute.x", ipc.ErrInvalidTopic},
		{"trailing dot", "router", "tool.v1.execute.", ipc.ErrInvalidTopic},
		{"empty topic", "router", "", ipc.ErrInvalidTopic},
		{"overlong topic", "router", "tool.v1.execute." + long, ipc.ErrInvalidTopic},
		{"too many segments", "router", "tool.v1.execute.a.b.c.d.e.f", ipc.ErrInvalidTopic},
		{"space in a segment", "router", "tool.v1.execute.a b", ipc.ErrInvalidTopic},
		{"non-ASCII segment", "router", "tool.v1.execute.é", ipc.ErrInvalidTopic},
		{"kernel cannot be impersonated", ipc.KernelSourceID, "agent.v1.response", ErrUnknownCapsule},
		{"unregistered capsule", "ghost", "agent.v1.response", ErrUnknownCapsule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := d.Stats()
			_, err := d.Publish(Caller{Capsule: tt.capsule, Principal: "default"}, tt.topic, []byte(`{}`))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Publish(%q): %v, want accepted", tt.topic, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Publish(%q) = %v, want %v", tt.topic, err, tt.want)
			}
			after := d.Stats()
			if after.Published != before.Published {
				t.Errorf("a refused publish reached the bus")
			}
			if errors.Is(tt.want, ErrDenied) && after.PublishDenied != before.PublishDenied+1 {
				t.Errorf("PublishDenied = %d, want %d", after.PublishDenied, before.PublishDenied+1)
			}
		})
	}
}

// TestTopicInjection: a dotted tool name lands inside the router's granted
// subtree, but the interceptor matcher needs equal depth, so it reaches no
// capsule's interceptor (seed 000, "Dispatcher Topic Matching").
func TestTopicInjection(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	rec := newRecorder()
	register(t, d, CapsuleACL{ID: "router", Publish: []string{"tool.v1.execute.*"}, Subscribe: []string{"tool.v1.execute.*.result"},
		Interceptors: []Interceptor{{Pattern: "tool.v1.execute.*.result", Handler: "result"}}}, rec.cont())
	register(t, d, CapsuleACL{ID: "x", Subscribe: []string{"tool.v1.execute.x"},
		Interceptors: []Interceptor{{Pattern: "tool.v1.execute.x", Handler: "exec"}}}, rec.cont())
	for _, topic := range []string{"tool.v1.execute.x.y", "tool.v1.execute.x.y.result", "tool.v1.execute.result"} {
		res := mustPublish(t, d, Caller{Capsule: "router", Principal: "default"}, topic, `{}`)
		if res.Interceptors != 0 {
			t.Errorf("%s matched %d interceptors, want 0", topic, res.Interceptors)
		}
	}
	rec.quiet(t, d)
	if res := mustPublish(t, d, Caller{Capsule: "router"}, "tool.v1.execute.x.result", `{}`); res.Interceptors != 1 {
		t.Errorf("the genuine result topic matched %d interceptors, want 1", res.Interceptors)
	}
	if got := rec.wait(t, 1)[0]; got.capsule != "router" || got.handler != "result" {
		t.Errorf("result delivered to %+v", got)
	}
}

func TestPublishDeniedErrorNamesCapsuleTopicAndRule(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "fs", Publish: []string{"a.b", "c.*"}}, continueTarget)
	_, err := d.Publish(Caller{Capsule: "fs"}, "tool.v1.execute.x", []byte(`{}`))
	want := "dispatch: publish tool.v1.execute.x from capsule fs: denied by ACL [publish] (patterns: a.b, c.*)"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
	register(t, d, CapsuleACL{ID: "mute"}, continueTarget)
	_, err = d.Subscribe(Caller{Capsule: "mute"}, "a.b", false)
	want = "dispatch: subscribe a.b from capsule mute: denied by ACL [subscribe] (no keys: everything is denied)"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
}

func TestSubscribeACL(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{
		ID:        "pb",
		Subscribe: []string{"tool.v1.response.describe.*", "registry.v1.*", "foo.bar", "x.*.z"},
	}, continueTarget)
	tests := []struct {
		name    string
		pattern string
		want    error
	}{
		{"exact key", "foo.bar", nil},
		{"wildcard key grants a concrete topic", "tool.v1.response.describe.fs", nil},
		{"wildcard key grants the same wildcard", "tool.v1.response.describe.*", nil},
		{"wildcard key grants its subtree", "registry.v1.selection.callback", nil},
		{"wildcard key grants a narrower wildcard", "registry.v1.selection.*", nil},
		{"exact key never grants a wildcard (escalation)", "foo.*", ErrDenied},
		{"wildcard one level up (escalation)", "tool.v1.response.*", ErrDenied},
		{"leading wildcard (escalation)", "*.bar", ErrDenied},
		{"bare wildcard (escalation)", "*", ErrDenied},
		{"mid-wildcard key grants the same pattern", "x.*.z", nil},
		{"mid-wildcard key grants a concrete topic", "x.y.z", nil},
		{"mid-wildcard key does not grant a subtree", "x.*.*", ErrDenied},
		{"unrelated topic", "user.v1.prompt", ErrDenied},
		{"$SYS prefix", "$SYS.>", ipc.ErrInvalidTopic},
		{"_INBOX prefix", "_INBOX.*", ipc.ErrInvalidTopic},
		{"NATS full wildcard", "foo.>", ipc.ErrInvalidTopic},
		{"empty segment", "foo..bar", ipc.ErrInvalidTopic},
		{"partial wildcard segment", "foo.b*", ipc.ErrInvalidTopic},
		{"overlong pattern", "foo." + strings.Repeat("b", ipc.MaxTopicBytes), ipc.ErrInvalidTopic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := d.Stats().SubscribeDenied
			r, err := d.Subscribe(Caller{Capsule: "pb", Principal: "default"}, tt.pattern, false)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Subscribe(%q): %v, want accepted", tt.pattern, err)
				}
				r.Close()
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Subscribe(%q) = %v, want %v", tt.pattern, err, tt.want)
			}
			if r != nil {
				t.Fatal("refused subscription returned a route")
			}
			if errors.Is(tt.want, ErrDenied) && d.Stats().SubscribeDenied != before+1 {
				t.Errorf("SubscribeDenied not counted")
			}
		})
	}
}

func TestRegisterRefuses(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "taken"}, continueTarget)
	tests := []struct {
		name   string
		acl    CapsuleACL
		target Target
	}{
		{"reserved kernel id", CapsuleACL{ID: ipc.KernelSourceID}, continueTarget},
		{"duplicate id", CapsuleACL{ID: "taken"}, continueTarget},
		{"empty id", CapsuleACL{ID: ""}, continueTarget},
		{"dotted id", CapsuleACL{ID: "a.b"}, continueTarget},
		{"wildcard id", CapsuleACL{ID: "*"}, continueTarget},
		{"nil target", CapsuleACL{ID: "x"}, nil},
		{"invalid publish key", CapsuleACL{ID: "x", Publish: []string{"a..b"}}, continueTarget},
		{"NATS wildcard publish key", CapsuleACL{ID: "x", Publish: []string{"a.>"}}, continueTarget},
		{"invalid subscribe key", CapsuleACL{ID: "x", Subscribe: []string{"$SYS.*"}}, continueTarget},
		{"invalid interceptor pattern", CapsuleACL{ID: "x", Subscribe: []string{"a.*"}, Interceptors: []Interceptor{{Pattern: "a.", Handler: "h"}}}, continueTarget},
		{"interceptor outside [subscribe]", CapsuleACL{ID: "x", Subscribe: []string{"a.b"}, Interceptors: []Interceptor{{Pattern: "a.*", Handler: "h"}}}, continueTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.Register(tt.acl, tt.target)
			if !errors.Is(err, ErrRegistration) {
				t.Fatalf("Register = %v, want ErrRegistration", err)
			}
			if tt.acl.ID != "taken" && d.queueCount(tt.acl.ID) != 0 || len(d.Interceptors("a.b")) != 0 {
				t.Fatal("a refused registration left state behind")
			}
		})
	}
	if _, err := d.Publish(Caller{Capsule: "x"}, "a.b", []byte(`{}`)); !errors.Is(err, ErrUnknownCapsule) {
		t.Fatalf("publish from a refused capsule = %v, want ErrUnknownCapsule", err)
	}
}

func TestUnresolvablePrincipalIsNotDispatched(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	rec := newRecorder()
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"a.*"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "obs", Subscribe: []string{"a.*"}, Interceptors: []Interceptor{{Pattern: "a.b", Handler: "h"}}}, rec.cont())
	route, err := d.Subscribe(Caller{Capsule: "obs"}, "a.*", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../escape", "a b", "bob@example", strings.Repeat("p", MaxPrincipalBytes+1), "ünï", "a.b"} {
		_, err := d.Publish(Caller{Capsule: "pub", Principal: p}, "a.b", []byte(`{}`))
		if !errors.Is(err, ErrInvalidPrincipal) {
			t.Errorf("principal %q: Publish = %v, want ErrInvalidPrincipal", p, err)
		}
		if _, err := d.Subscribe(Caller{Capsule: "obs", Principal: p}, "a.*", true); !errors.Is(err, ErrInvalidPrincipal) {
			t.Errorf("principal %q: Subscribe = %v, want ErrInvalidPrincipal", p, err)
		}
	}
	rec.quiet(t, d)
	if dl, ok := route.TryRecv(); ok {
		t.Fatalf("an event with an invalid principal reached a route: %+v", dl.Envelope)
	}
	// The longest valid principal still goes through.
	mustPublish(t, d, Caller{Capsule: "pub", Principal: strings.Repeat("p", MaxPrincipalBytes)}, "a.b", `{}`)
	rec.wait(t, 1)
}

// TestTheLastPublishedCacheNeverWidensTheACL: once a topic has been allowed
// (and cached), every attempt around it is still checked in full.
func TestTheLastPublishedCacheNeverWidensTheACL(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "tool", Publish: []string{"tool.v1.execute.read_file.result"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "other", Publish: []string{"other.v1.x"}}, continueTarget)
	from := Caller{Capsule: "tool", Principal: "alice"}
	allowed := "tool.v1.execute.read_file.result"
	for _, topic := range []string{
		"tool.v1.execute.write_file.result",
		"tool.v1.execute.read_file.result.x",
		"tool.v1.execute.read_file",
		"tool.v1.execute.*.result",
		"tool.v1.execute.read_file.resul",
		"tool.v1.execute.read_file.result ",
		"tool.v1.execute..result",
		"",
	} {
		mustPublish(t, d, from, allowed, `{}`) // the cache holds the allowed topic
		if _, err := d.Publish(from, topic, json.RawMessage(`{}`)); err == nil {
			t.Errorf("publish %q after %q: allowed", topic, allowed)
		}
	}
	// The cache is per capsule: another capsule's allowed topic opens
	// nothing here, and this one's opens nothing there.
	mustPublish(t, d, Caller{Capsule: "other", Principal: "alice"}, "other.v1.x", `{}`)
	if _, err := d.Publish(from, "other.v1.x", json.RawMessage(`{}`)); !errors.Is(err, ErrDenied) {
		t.Errorf("tool published other's topic: %v", err)
	}
	if _, err := d.Publish(Caller{Capsule: "other", Principal: "alice"}, allowed, json.RawMessage(`{}`)); !errors.Is(err, ErrDenied) {
		t.Errorf("other published tool's topic: %v", err)
	}
}

// CheckPublish answers from the capsule's remembered topics when it can
// (the failure reply's topic is usually one the capsule publishes on): a
// remembered topic is allowed, and nothing else is let through by it.
func TestCheckPublishAfterPublishing(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "tool", Publish: []string{"tool.v1.execute.*.result"}}, continueTarget)
	from := Caller{Capsule: "tool", Principal: "default"}
	for range 2 { // before and after the topic is remembered
		if err := d.CheckPublish("tool", "tool.v1.execute.read_file.result"); err != nil {
			t.Fatalf("allowed topic refused: %v", err)
		}
		mustPublish(t, d, from, "tool.v1.execute.read_file.result", `{}`)
	}
	for _, topic := range []string{
		"tool.v1.execute.read_file",            // not in [publish]
		"tool.v1.execute.read_file.result.x",   // one segment more
		"tool.v1.execute..result",              // invalid
		"tool.v1.execute.read_file.result\x00", // invalid
	} {
		if err := d.CheckPublish("tool", topic); err == nil {
			t.Errorf("CheckPublish(%q) allowed", topic)
		}
	}
	if err := d.CheckPublish("other", "tool.v1.execute.read_file.result"); err == nil {
		t.Error("an unknown capsule's check passed")
	}
}
