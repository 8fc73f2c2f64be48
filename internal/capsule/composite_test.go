package capsule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/manifest"
)

// journal records the lifecycle calls of every fake engine, in order, as
// "<engine>.<op>".
type journal struct {
	mu    sync.Mutex
	calls []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.calls = append(j.calls, s)
	j.mu.Unlock()
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.calls)
}

// fakeEngine is an Engine whose answers a test scripts.
type fakeEngine struct {
	name      string
	j         *journal
	loadErr   error
	unloadErr error
	// ready blocks WaitReady until closed; nil means ready at once.
	ready chan struct{}
	// readyIgnoresCtx makes WaitReady answer ready without looking at its
	// context, as a sloppy engine might.
	readyIgnoresCtx bool
	// readyAtDeadline makes WaitReady block until its context ends and then
	// answer ready: an engine that used up the whole budget.
	readyAtDeadline bool
	invoke          func(hostapi.Invocation) (hostapi.Verdict, error)

	mu     sync.Mutex
	health Health
}

func (e *fakeEngine) Name() string { return e.name }

func (e *fakeEngine) Load(context.Context) error {
	e.j.add(e.name + ".load")
	if e.loadErr != nil {
		e.setHealth(Health{State: Failed, Err: e.loadErr})
		return e.loadErr
	}
	e.setHealth(Health{State: Ready})
	return nil
}

func (e *fakeEngine) WaitReady(ctx context.Context) error {
	e.j.add(e.name + ".wait")
	if e.readyAtDeadline {
		<-ctx.Done()
		return nil
	}
	if e.readyIgnoresCtx || e.ready == nil {
		return nil
	}
	select {
	case <-e.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *fakeEngine) Invoke(_ context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	e.j.add(e.name + ".invoke")
	if e.invoke == nil {
		return hostapi.Verdict{}, ErrNotSupported
	}
	return e.invoke(inv)
}

func (e *fakeEngine) Unload(context.Context) error {
	e.j.add(e.name + ".unload")
	e.setHealth(Health{State: Unloaded})
	return e.unloadErr
}

func (e *fakeEngine) Health() Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.health
}

func (e *fakeEngine) setHealth(h Health) {
	e.mu.Lock()
	e.health = h
	e.mu.Unlock()
}

func testManifest(id string) *manifest.Manifest {
	return &manifest.Manifest{Package: manifest.Package{Name: id, Version: "0.1.0"}}
}

func newTestComposite(j *journal, engines ...*fakeEngine) *Composite {
	es := make([]Engine, len(engines))
	for i, e := range engines {
		e.j = j
		es[i] = e
	}
	return NewComposite(testManifest("cap"), time.Minute, nil, es...)
}

func TestCompositeLoad(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name      string
		engines   []*fakeEngine
		wantCalls []string
		wantState State
		wantErr   []string // substrings of the error; nil means success
	}{
		{
			name:      "every engine loads in order",
			engines:   []*fakeEngine{{name: "wasm"}, {name: "mcp:a"}, {name: "static"}},
			wantCalls: []string{"wasm.load", "mcp:a.load", "static.load"},
			wantState: Ready,
		},
		{
			name:      "no engines is ready",
			wantState: Ready,
		},
		{
			name:      "first failure stops loading and rolls back in reverse",
			engines:   []*fakeEngine{{name: "wasm"}, {name: "mcp:a"}, {name: "mcp:b", loadErr: boom}, {name: "static"}},
			wantCalls: []string{"wasm.load", "mcp:a.load", "mcp:b.load", "mcp:a.unload", "wasm.unload"},
			wantState: Failed,
			wantErr:   []string{"capsule cap", "engine mcp:b", "boom"},
		},
		{
			name:      "first engine failing rolls back nothing",
			engines:   []*fakeEngine{{name: "wasm", loadErr: boom}, {name: "static"}},
			wantCalls: []string{"wasm.load"},
			wantState: Failed,
			wantErr:   []string{"engine wasm", "boom"},
		},
		{
			name: "a failing rollback is reported with the load error",
			engines: []*fakeEngine{
				{name: "wasm", unloadErr: errors.New("stuck")},
				{name: "static", loadErr: boom},
			},
			wantCalls: []string{"wasm.load", "static.load", "wasm.unload"},
			wantState: Failed,
			wantErr:   []string{"boom", "rollback", "stuck"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var j journal
			c := newTestComposite(&j, tc.engines...)
			err := c.Load(context.Background())
			if got := j.list(); !slices.Equal(got, tc.wantCalls) {
				t.Errorf("calls = %v, want %v", got, tc.wantCalls)
			}
			if h := c.Health(); h.State != tc.wantState {
				t.Errorf("state = %s, want %s", h.State, tc.wantState)
			}
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if !errors.Is(err, boom) {
				t.Errorf("error %v does not wrap the engine's error", err)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if h := c.Health(); !errors.Is(h.Err, boom) {
				t.Errorf("health error = %v, want the load error", h.Err)
			}
		})
	}
}

func TestCompositeLoadTwiceRefused(t *testing.T) {
	var j journal
	c := newTestComposite(&j, &fakeEngine{name: "static"})
	if err := c.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Load(context.Background()); err == nil || !strings.Contains(err.Error(), "already ready") {
		t.Fatalf("second Load = %v, want an 'already ready' error", err)
	}
	if got := j.list(); !slices.Equal(got, []string{"static.load"}) {
		t.Errorf("calls = %v, want one load", got)
	}
}

func TestCompositeUnloadIsBestEffort(t *testing.T) {
	var j journal
	c := newTestComposite(&j,
		&fakeEngine{name: "wasm", unloadErr: errors.New("wasm stuck")},
		&fakeEngine{name: "mcp:a"},
		&fakeEngine{name: "static", unloadErr: errors.New("static stuck")},
	)
	if err := c.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := c.Unload(context.Background())
	want := []string{"wasm.load", "mcp:a.load", "static.load", "static.unload", "mcp:a.unload", "wasm.unload"}
	if got := j.list(); !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "wasm stuck") || !strings.Contains(err.Error(), "static stuck") {
		t.Errorf("Unload error = %v, want both engines' errors", err)
	}
	if h := c.Health(); h.State != Unloaded {
		t.Errorf("state after unload = %s, want unloaded", h.State)
	}
}

func TestCompositeWaitReadySharesOneDeadline(t *testing.T) {
	never := make(chan struct{}) // the first engine never becomes ready
	cases := []struct {
		name      string
		engines   []*fakeEngine
		wantErr   bool
		wantCalls []string
	}{
		{
			name:      "all ready",
			engines:   []*fakeEngine{{name: "wasm"}, {name: "static"}},
			wantCalls: []string{"wasm.wait", "static.wait"},
		},
		{
			name:      "no engines",
			wantCalls: nil,
		},
		{
			name:      "the first engine never gets ready",
			engines:   []*fakeEngine{{name: "wasm", ready: never}, {name: "static"}},
			wantErr:   true,
			wantCalls: []string{"wasm.wait"},
		},
		{
			// The first engine gets ready only as the budget runs out and
			// the second would say ready whatever its context: only a
			// deadline shared by both makes the second time out at once.
			name:      "the first engine spends the budget; the next has none left",
			engines:   []*fakeEngine{{name: "wasm", readyAtDeadline: true}, {name: "static", readyIgnoresCtx: true}},
			wantErr:   true,
			wantCalls: []string{"wasm.wait"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var j journal
			c := newTestComposite(&j, tc.engines...)
			if err := c.Load(context.Background()); err != nil {
				t.Fatal(err)
			}
			j = journal{}
			err := c.WaitReady(context.Background(), 20*time.Millisecond)
			if (err != nil) != tc.wantErr {
				t.Fatalf("WaitReady = %v, want error %v", err, tc.wantErr)
			}
			if got := j.list(); !slices.Equal(got, tc.wantCalls) {
				t.Errorf("calls = %v, want %v", got, tc.wantCalls)
			}
			if tc.wantErr {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v is not a deadline", err)
				}
				if h := c.Health(); h.State != Failed {
					t.Errorf("state = %s, want failed", h.State)
				}
			}
		})
	}
}

func TestCompositeInvokeSkipsNotSupported(t *testing.T) {
	answer := func(name string) func(hostapi.Invocation) (hostapi.Verdict, error) {
		return func(hostapi.Invocation) (hostapi.Verdict, error) {
			return hostapi.Verdict{Action: hostapi.Final, Reason: name}, nil
		}
	}
	failWith := func(err error) func(hostapi.Invocation) (hostapi.Verdict, error) {
		return func(hostapi.Invocation) (hostapi.Verdict, error) { return hostapi.Verdict{}, err }
	}
	trap := errors.New("trap")
	cases := []struct {
		name       string
		engines    []*fakeEngine
		wantReason string
		wantErr    error
		wantCalls  []string
	}{
		{
			name:       "first supporting engine answers",
			engines:    []*fakeEngine{{name: "wasm", invoke: answer("wasm")}, {name: "static", invoke: answer("static")}},
			wantReason: "wasm",
			wantCalls:  []string{"wasm.invoke"},
		},
		{
			name:       "not-supported engines are skipped",
			engines:    []*fakeEngine{{name: "wasm"}, {name: "mcp:a"}, {name: "static", invoke: answer("static")}},
			wantReason: "static",
			wantCalls:  []string{"wasm.invoke", "mcp:a.invoke", "static.invoke"},
		},
		{
			name:      "another error stops the search",
			engines:   []*fakeEngine{{name: "wasm", invoke: failWith(trap)}, {name: "static", invoke: answer("static")}},
			wantErr:   trap,
			wantCalls: []string{"wasm.invoke"},
		},
		{
			name:       "a wrapped not-supported is still skipped",
			engines:    []*fakeEngine{{name: "wasm", invoke: failWith(fmt.Errorf("pool: %w", ErrNotSupported))}, {name: "static", invoke: answer("static")}},
			wantReason: "static",
			wantCalls:  []string{"wasm.invoke", "static.invoke"},
		},
		{
			name:      "nobody supports it",
			engines:   []*fakeEngine{{name: "wasm"}, {name: "static"}},
			wantErr:   ErrNotSupported,
			wantCalls: []string{"wasm.invoke", "static.invoke"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var j journal
			c := newTestComposite(&j, tc.engines...)
			if err := c.Load(context.Background()); err != nil {
				t.Fatal(err)
			}
			j = journal{}
			v, err := c.Invoke(context.Background(), hostapi.Invocation{Handler: "h"})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Invoke error = %v, want %v", err, tc.wantErr)
				}
			} else if err != nil || v.Reason != tc.wantReason {
				t.Fatalf("Invoke = %+v, %v; want the answer of %s", v, err, tc.wantReason)
			}
			if got := j.list(); !slices.Equal(got, tc.wantCalls) {
				t.Errorf("calls = %v, want %v", got, tc.wantCalls)
			}
		})
	}
}

func TestCompositeInvokeRefusedUnlessReady(t *testing.T) {
	var j journal
	e := &fakeEngine{name: "static", invoke: func(hostapi.Invocation) (hostapi.Verdict, error) { return hostapi.Verdict{}, nil }}
	c := newTestComposite(&j, e)
	if _, err := c.Invoke(context.Background(), hostapi.Invocation{}); err == nil {
		t.Fatal("Invoke before Load succeeded")
	}
	if slices.Contains(j.list(), "static.invoke") {
		t.Error("an engine was invoked before the capsule loaded")
	}
}

func TestCompositeHealth(t *testing.T) {
	crash := errors.New("run loop exited")
	other := errors.New("second failure")
	var j journal
	a := &fakeEngine{name: "wasm"}
	b := &fakeEngine{name: "mcp:a"}
	s := &fakeEngine{name: "static"}
	c := newTestComposite(&j, a, b, s)
	if h := c.Health(); h.State != Unloaded {
		t.Fatalf("fresh capsule state = %s, want unloaded", h.State)
	}
	if err := c.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h := c.Health(); h.State != Ready || h.Err != nil {
		t.Fatalf("loaded capsule health = %+v, want ready", h)
	}
	b.setHealth(Health{State: Failed, Err: crash})
	s.setHealth(Health{State: Failed, Err: other})
	if h := c.Health(); h.State != Failed || !errors.Is(h.Err, crash) {
		t.Fatalf("health = %+v, want the first failed engine's (%v)", h, crash)
	}
	if _, err := c.Invoke(context.Background(), hostapi.Invocation{}); err == nil {
		t.Error("a capsule with a failed engine still takes calls")
	}
	b.setHealth(Health{State: Ready})
	if h := c.Health(); !errors.Is(h.Err, other) {
		t.Fatalf("health = %+v, want the remaining failed engine's (%v)", h, other)
	}
}

func TestCompositeEnginesAndSurface(t *testing.T) {
	var j journal
	c := newTestComposite(&j, &fakeEngine{name: "wasm"}, &fakeEngine{name: "static"})
	if got := c.Engines(); !slices.Equal(got, []string{"wasm", "static"}) {
		t.Errorf("Engines = %v", got)
	}
	if s := c.Surface(); len(s.Publish)+len(s.Subscribe)+len(s.Interceptors) != 0 {
		t.Errorf("engines without a surface gave %+v", s)
	}
}
