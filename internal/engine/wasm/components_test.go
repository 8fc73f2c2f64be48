package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

// componentsManifest is testdata/components with each file's path set to
// its built module; extra components are appended.
func componentsManifest(t *testing.T, extra ...manifest.Component) *manifest.Manifest {
	t.Helper()
	return componentsManifestTB(t, extra...)
}

func componentsManifestTB(t testing.TB, extra ...manifest.Component) *manifest.Manifest {
	t.Helper()
	data, err := os.ReadFile("testdata/components/Capsule.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, diags := manifest.Parse(data, "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	parts := guest(t, "testdata/components/parts")
	for i := range m.Components {
		m.Components[i].Path, m.Components[i].Hash = parts.Wasm, parts.SHA256
	}
	m.Components = append(m.Components, extra...)
	return m
}

// loadComponents loads m through a wasm engine, as the kernel does.
func loadComponents(t *testing.T, m *manifest.Manifest) capsule.Engine {
	t.Helper()
	h, _ := newHarness(t, &syncBuffer{})
	rt := newRuntime(t, Options{Logger: h.log})
	e, err := h.loadEngine(t, rt, m, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type componentAnswer struct {
	Result string `json:"result"`
	Error  string `json:"error"`
}

func callThroughApp(t *testing.T, e capsule.Engine, principal, component, handler, payload string) componentAnswer {
	t.Helper()
	req, _ := json.Marshal(map[string]string{"component": component, "handler": handler, "payload": payload})
	v, err := e.Invoke(context.Background(), hostapi.Invocation{Handler: "call", Principal: principal, Payload: req})
	if err != nil {
		t.Fatalf("call %s.%s: %v", component, handler, err)
	}
	var a componentAnswer
	if err := json.Unmarshal(v.Payload, &a); err != nil {
		t.Fatalf("call %s.%s answered %q: %v", component, handler, v.Payload, err)
	}
	return a
}

func TestSeveralComponentsLoadInOrderAndLink(t *testing.T) {
	e := loadComponents(t, componentsManifest(t))
	comps, ok := e.(*Components)
	if !ok {
		t.Fatalf("a capsule of three components got engine %T", e)
	}
	var ids []string
	for _, ce := range comps.Engines() {
		if ce.Health().State != capsule.Ready {
			t.Errorf("component %s is %s after the load", ce.comp.ID, ce.Health().State)
		}
		ids = append(ids, ce.comp.ID)
	}
	if strings.Join(ids, ",") != "app,lib,other" {
		t.Errorf("components in order %v, want app, lib, other", ids)
	}

	// The library runs in its own instance: its counter is its own, and
	// it runs as the calling principal.
	for i, want := range []string{"HELLO #1", "WORLD #2"} {
		a := callThroughApp(t, e, "alice", "lib", "upper", []string{"hello", "world"}[i])
		if a.Result != want || a.Error != "" {
			t.Errorf("app → lib.upper = %+v, want %q", a, want)
		}
	}
	if a := callThroughApp(t, e, "alice", "lib", "whoami", ""); a.Result != "alice" {
		t.Errorf("the library ran as %+v, want alice", a)
	}

	// A library is never reached from the bus, even for a handler it has.
	if _, err := e.Invoke(context.Background(), hostapi.Invocation{Handler: "upper", Principal: "alice", Payload: []byte("x")}); !errors.Is(err, capsule.ErrNotSupported) {
		t.Errorf("a bus call of the library's handler: %v, want not supported", err)
	}
}

// TestComponentCallEscapes: what a component may call is the libraries its
// own link list names, nothing else.
func TestComponentCallEscapes(t *testing.T) {
	e := loadComponents(t, componentsManifest(t))
	tests := []struct {
		name, component, handler, payload, want string
	}{
		{"a library it does not link", "other", "upper", "x", `does not link "other"`},
		{"itself (the executable)", "app", "count", "", "cannot call itself"},
		{"no such component", "ghost", "upper", "x", `no library component with id "ghost"`},
		{"an empty id", "", "upper", "x", `no library component with id ""`},
		{"a file name for an id", "lib.wasm", "upper", "x", `no library component with id "lib.wasm"`},
		{"no such handler", "lib", "nope", "", `has no handler "nope"`},
		{"an empty handler", "lib", "", "", `has no handler ""`},
		{"a handler that refuses", "lib", "refuse", "this", "the library refuses this"},
		{"a library calling on (it links nothing)", "lib", "relay", "other", `does not link "other"`},
		{"a library calling the executable", "lib", "relay", "app", `no library component with id "app"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := callThroughApp(t, e, "alice", tt.component, tt.handler, tt.payload)
			if a.Result != "" || !strings.Contains(a.Error, tt.want) {
				t.Errorf("got %+v, want an error containing %q", a, tt.want)
			}
		})
	}
	// Nothing refused ran: the library counted no call.
	if a := callThroughApp(t, e, "alice", "lib", "upper", "y"); a.Result != "Y #1" {
		t.Errorf("after the refusals lib.upper = %+v, want its first call", a)
	}
}

// TestComponentCallsNestBoundedly: two libraries that link each other
// relay a call back and forth; the fifth nested call is refused, so a
// cycle ends at once instead of waiting for instances.
func TestComponentCallsNestBoundedly(t *testing.T) {
	m := componentsManifest(t)
	m.Components[1].Link = []string{"other"}
	m.Components[2].Link = []string{"lib"}
	e := loadComponents(t, m)
	// app → lib.relay → other.upper: two deep, fine.
	if a := callThroughApp(t, e, "alice", "lib", "relay", "other:upper:ok"); a.Result != "OK #1" {
		t.Errorf("app → lib → other = %+v", a)
	}
	// app → lib → other → lib → other → lib: the fifth call is refused.
	a := callThroughApp(t, e, "alice", "lib", "relay", "other:relay:lib:relay:other:relay:lib:relay:other:upper:deep")
	if a.Result != "" || !strings.Contains(a.Error, "nest deeper than 4") {
		t.Errorf("a cycle of relays = %+v, want refused past 4 deep", a)
	}
}

// TestAComponentThatTrapsAtStartFailsTheLoad: of three components, the
// third traps in _initialize; the load fails naming it and the two loaded
// before it are unloaded, their modules released.
func TestAComponentThatTrapsAtStartFailsTheLoad(t *testing.T) {
	logs := &syncBuffer{}
	h, _ := newHarness(t, logs)
	rt := newRuntime(t, Options{Logger: h.log})
	trap := guest(t, "testdata/components/trap")
	m := componentsManifest(t, manifest.Component{ID: "trap", File: "trap.wasm", Type: manifest.ComponentExecutable, Path: trap.Wasm, Hash: trap.SHA256})
	m.Components = append(m.Components[:1], m.Components[2:]...) // app, other, trap: three
	hc := newHostCapsule(t, h, m)
	e, err := rt.Engine(m, hc)
	if err != nil {
		t.Fatal(err)
	}
	comp := capsule.NewComposite(m, 0, h.log, e)
	err = comp.Load(context.Background())
	if err == nil {
		_ = comp.Unload(context.Background())
		t.Fatal("a capsule whose third component traps at start loaded")
	}
	for _, want := range []string{"component 3 of 3", "component trap (trap.wasm)", "_initialize"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("load error %q does not say %q", err, want)
		}
	}
	if st := comp.Health().State; st != capsule.Failed {
		t.Errorf("capsule state %s, want failed", st)
	}
	for _, ce := range e.(*Components).Engines() {
		if st := ce.Health().State; st != capsule.Unloaded && ce.comp.ID != "trap" {
			t.Errorf("component %s left %s: the capsule is half loaded", ce.comp.ID, st)
		}
		if ce.pool != nil && ce.pool.stats().Idle != 0 {
			t.Errorf("component %s keeps %d instances", ce.comp.ID, ce.pool.stats().Idle)
		}
	}
	rt.mu.Lock()
	held := len(rt.compiled)
	rt.mu.Unlock()
	if held != 0 {
		t.Errorf("the runtime still holds %d compiled modules after the failed load", held)
	}
}

func newHostCapsule(t *testing.T, h *harness, m *manifest.Manifest) *host.Capsule {
	t.Helper()
	hc, err := host.NewCapsule(h.deps, m, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.Close)
	return hc
}

// BenchmarkComponentCall is one bus call of the executable that calls the
// library through the host, against the same call answered without it.
func BenchmarkComponentCall(b *testing.B) {
	h, _ := newHarness(b, &syncBuffer{})
	rt := newRuntime(b, Options{Logger: h.log})
	e, err := h.loadEngine(b, rt, componentsManifestTB(b), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("app-only", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.Invoke(ctx, hostapi.Invocation{Handler: "count", Principal: "alice"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	req := []byte(`{"component":"lib","handler":"upper","payload":"hello"}`)
	b.Run("app-calls-lib", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.Invoke(ctx, hostapi.Invocation{Handler: "call", Principal: "alice", Payload: req}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
