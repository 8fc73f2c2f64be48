package dispatch

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// fakeTransport records what the dispatcher asks of a transport.
type fakeTransport struct {
	mu        sync.Mutex
	attached  map[string][2][]string
	events    []string
	forwarded []*ipc.Envelope
	refuse    error
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{attached: make(map[string][2][]string)}
}

func (f *fakeTransport) Attach(id string, publish, subscribe, _ []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != nil {
		return f.refuse
	}
	f.attached[id] = [2][]string{publish, subscribe}
	f.events = append(f.events, "attach "+id)
	return nil
}

func (f *fakeTransport) Detach(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.attached, id)
	f.events = append(f.events, "detach "+id)
}

func (f *fakeTransport) Forward(e *ipc.Envelope) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forwarded = append(f.forwarded, e)
}

func TestTransportFollowsRegistrations(t *testing.T) {
	ft := newFakeTransport()
	d, _ := newTestDispatcher(t, Options{Transport: ft})
	acl := CapsuleACL{ID: "a", Publish: []string{"x.*"}, Subscribe: []string{"y"}}
	register(t, d, acl, continueTarget)
	if got := ft.attached["a"]; !slices.Equal(got[0], acl.Publish) || !slices.Equal(got[1], acl.Subscribe) {
		t.Fatalf("attached with %q", got)
	}
	retire, err := d.Replace(CapsuleACL{ID: "a", Publish: []string{"z"}}, continueTarget)
	if err != nil {
		t.Fatal(err)
	}
	retire()
	if got := ft.attached["a"]; !slices.Equal(got[0], []string{"z"}) {
		t.Fatalf("after replace attached with %q", got)
	}
	d.Unregister("a")
	if want := []string{"attach a", "attach a", "detach a"}; !slices.Equal(ft.events, want) {
		t.Fatalf("events %q, want %q", ft.events, want)
	}
}

func TestTransportRefusalRefusesRegistration(t *testing.T) {
	ft := newFakeTransport()
	d, _ := newTestDispatcher(t, Options{Transport: ft})
	register(t, d, CapsuleACL{ID: "a"}, continueTarget)
	ft.refuse = errors.New("key cannot travel")
	if err := d.Register(CapsuleACL{ID: "b"}, continueTarget); !errors.Is(err, ErrRegistration) {
		t.Fatalf("Register = %v, want ErrRegistration", err)
	}
	if _, err := d.Replace(CapsuleACL{ID: "a"}, continueTarget); !errors.Is(err, ErrRegistration) {
		t.Fatalf("Replace = %v, want ErrRegistration", err)
	}
	if _, err := d.Publish(Caller{Capsule: "b"}, "x", json.RawMessage(`1`)); !errors.Is(err, ErrUnknownCapsule) {
		t.Fatalf("refused capsule can publish: %v", err)
	}
}

func TestCapsulePublishesAreForwardedKernelEventsAreNot(t *testing.T) {
	ft := newFakeTransport()
	d, _ := newTestDispatcher(t, Options{Transport: ft})
	register(t, d, CapsuleACL{ID: "a", Publish: []string{"x"}}, continueTarget)
	mustPublish(t, d, Caller{Capsule: "a", Principal: "alice"}, "x", `1`)
	if _, err := d.Publish(Caller{}, "x", json.RawMessage(`2`), KernelEvent); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Publish(Caller{Capsule: "a"}, "denied", json.RawMessage(`3`)); !errors.Is(err, ErrDenied) {
		t.Fatal(err)
	}
	if len(ft.forwarded) != 1 {
		t.Fatalf("forwarded %d envelopes, want the capsule's one", len(ft.forwarded))
	}
	e := ft.forwarded[0]
	if e.SourceID != "a" || e.Principal != "alice" || e.Seq == 0 || e.Timestamp == 0 {
		t.Fatalf("forwarded %+v: want it stamped by the bus and the host", e)
	}
}

func TestDeliverRemote(t *testing.T) {
	rec := newRecorder()
	d, b := newTestDispatcher(t, Options{Transport: newFakeTransport()})
	register(t, d, CapsuleACL{ID: "watch", Subscribe: []string{"news.*"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "guard", Subscribe: []string{"news.*"},
		Interceptors: []Interceptor{{Pattern: "news.*", Handler: "h", Priority: 1}}}, rec.cont())
	route, err := d.Subscribe(Caller{Capsule: "watch"}, "news.*", false)
	if err != nil {
		t.Fatal(err)
	}
	// From a capsule this host does not know, with no rate limit applied:
	// the publishing host and the broker checked it.
	e := &ipc.Envelope{Topic: "news.x", Payload: json.RawMessage(`{"n":1}`), SourceID: "remote", Principal: "alice", Seq: 99, Timestamp: 5}
	if err := d.DeliverRemote(e, nil); err != nil {
		t.Fatal(err)
	}
	got := recvOne(t, route)
	if got.Envelope != e || got.Envelope.Seq != 99 {
		t.Fatalf("route received %+v, want the envelope as stamped on its host", got.Envelope)
	}
	if c := rec.wait(t, 1)[0]; c.capsule != "guard" || c.principal != "alice" {
		t.Fatalf("interceptor call %+v", c)
	}
	if s := d.Stats(); s.Remote != 1 || s.Published != 0 {
		t.Fatalf("stats remote %d published %d", s.Remote, s.Published)
	}
	if s := b.Stats(); s.Published != 0 {
		t.Fatalf("the bus counted a remote envelope as published here")
	}
	for _, bad := range []*ipc.Envelope{
		{Topic: "news.x", Payload: json.RawMessage(`1`), SourceID: ipc.KernelSourceID},
		{Topic: "news.*", Payload: json.RawMessage(`1`), SourceID: "remote"},
		{Topic: "news.x", Payload: json.RawMessage(`1`), SourceID: "remote", Principal: "not a principal"},
	} {
		if err := d.DeliverRemote(bad, nil); err == nil {
			t.Errorf("DeliverRemote(%+v) accepted", bad)
		}
	}
	rec.quiet(t, d)
}

// TestDeliverRemoteRunsOnlyAdmittedCapsules: the transport's choice of which
// capsules intercept here leaves the others out of this host's chain, keeps
// the order of the rest, and never changes what routes receive.
func TestDeliverRemoteRunsOnlyAdmittedCapsules(t *testing.T) {
	rec := newRecorder()
	d, _ := newTestDispatcher(t, Options{Transport: newFakeTransport()})
	for i, id := range []string{"c1", "c2", "c3"} {
		register(t, d, CapsuleACL{ID: id, Subscribe: []string{"ev"},
			Interceptors: []Interceptor{{Pattern: "ev", Handler: "h", Priority: uint32(i)}}}, rec.cont())
	}
	route, err := d.Subscribe(Caller{Capsule: "c2"}, "ev", false)
	if err != nil {
		t.Fatal(err)
	}
	e := &ipc.Envelope{Topic: "ev", Payload: json.RawMessage(`1`), SourceID: "remote"}
	if err := d.DeliverRemote(e, func(id string) bool { return id != "c2" }); err != nil {
		t.Fatal(err)
	}
	calls := rec.wait(t, 2)
	if calls[0].capsule != "c1" || calls[1].capsule != "c3" {
		t.Fatalf("chain ran %+v, want c1 then c3", calls)
	}
	rec.quiet(t, d)
	if got := recvOne(t, route); got.Envelope != e {
		t.Fatal("the route of a capsule left out of the chain did not receive the envelope")
	}
	if err := d.DeliverRemote(e, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	rec.quiet(t, d)
}

// remoteProviders is a fake transport that knows another host's providers.
type remoteProviders struct {
	*fakeTransport
	ids map[string][]string
}

func (r remoteProviders) ExactInterceptors(topic string) []string { return r.ids[topic] }

func TestExactInterceptorsAddOtherHostsProviders(t *testing.T) {
	rp := remoteProviders{fakeTransport: newFakeTransport(), ids: map[string][]string{
		"tool.v1.execute.echo": {"echo", "remote-echo"},
	}}
	d, _ := newTestDispatcher(t, Options{Transport: rp})
	register(t, d, CapsuleACL{ID: "echo", Subscribe: []string{"tool.v1.execute.echo"},
		Interceptors: []Interceptor{{Pattern: "tool.v1.execute.echo", Handler: "h"}}}, continueTarget)
	for range 2 { // the second answer comes from the cache
		if got := d.ExactInterceptors("tool.v1.execute.echo"); !slices.Equal(got, []string{"echo", "remote-echo"}) {
			t.Fatalf("providers %q, want this host's then the other host's, each once", got)
		}
	}
	register(t, d, CapsuleACL{ID: "middle", Subscribe: []string{"tool.v1.execute.*"},
		Interceptors: []Interceptor{{Pattern: "tool.v1.execute.*", Handler: "h", Priority: 1}}}, continueTarget)
	if got := d.ExactInterceptors("tool.v1.execute.echo"); !slices.Equal(got, []string{"echo", "remote-echo"}) {
		t.Fatalf("providers %q: a wildcard interceptor is no provider", got)
	}
	if got := d.Interceptors("tool.v1.execute.echo"); !slices.Equal(got, []string{"echo", "middle", "remote-echo"}) {
		t.Fatalf("Interceptors %q, want every match here, then the other host's exact ones", got)
	}
}

// TestInterceptorsAddOtherHostsExactInterceptors: who intercepts a topic
// includes the other hosts' exact interceptors, after this host's, each
// once, whatever the topic (the kernel knows no topic's convention).
func TestInterceptorsAddOtherHostsExactInterceptors(t *testing.T) {
	rp := remoteProviders{fakeTransport: newFakeTransport(), ids: map[string][]string{
		ipc.ToolRequestExecuteTopic: {"approval", "router"},
		"mesh.hello":                {"remote-listener"},
	}}
	d, _ := newTestDispatcher(t, Options{Transport: rp})
	register(t, d, CapsuleACL{ID: "approval", Subscribe: []string{ipc.ToolRequestExecuteTopic, "mesh.hello"},
		Interceptors: []Interceptor{{Pattern: ipc.ToolRequestExecuteTopic, Handler: "h"}, {Pattern: "mesh.hello", Handler: "h"}}}, continueTarget)
	for range 2 { // the second answer comes from the cache
		got := d.Interceptors(ipc.ToolRequestExecuteTopic)
		if !slices.Equal(got, []string{"approval", "router"}) {
			t.Fatalf("routers %q, want this host's then the other host's, each once", got)
		}
		got[0] = "changed" // the caller's copy
	}
	for range 2 {
		if got := d.Interceptors("mesh.hello"); !slices.Equal(got, []string{"approval", "remote-listener"}) {
			t.Fatalf("Interceptors(mesh.hello) %q, want this host's then the other host's", got)
		}
	}
	if got := d.Interceptors("mesh.other"); len(got) != 0 {
		t.Fatalf("Interceptors(mesh.other) %q, want none", got)
	}
}
