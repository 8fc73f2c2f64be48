package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/manifest"
)

// flaky is the MCP engines of a test: per server id, how many loads fail
// before one succeeds (-1: every one), the loads made and the last engine.
type flaky struct {
	mu    sync.Mutex
	fails map[string]int
	loads map[string]int
	last  map[string]*flakyEngine
}

func newFlaky(fails map[string]int) *flaky {
	return &flaky{fails: fails, loads: map[string]int{}, last: map[string]*flakyEngine{}}
}

func (f *flaky) engines() Engines {
	return Engines{MCP: func(srv manifest.MCPServer, _ *manifest.Manifest, _ *host.Capsule, _ map[string]string) (capsule.Engine, error) {
		e := &flakyEngine{name: srv.ID, f: f}
		f.mu.Lock()
		f.last[srv.ID] = e
		f.mu.Unlock()
		return e, nil
	}}
}

func (f *flaky) loadsOf(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads[id]
}

type flakyEngine struct {
	name   string
	f      *flaky
	health capsule.HealthCell
}

func (e *flakyEngine) Name() string { return "mcp:" + e.name }
func (e *flakyEngine) Load(context.Context) error {
	e.f.mu.Lock()
	e.f.loads[e.name]++
	n := e.f.fails[e.name]
	if n > 0 {
		e.f.fails[e.name] = n - 1
	}
	e.f.mu.Unlock()
	if n != 0 {
		err := errors.New("server " + e.name + " exited at start")
		e.health.SetHealth(capsule.Failed, err)
		return err
	}
	e.health.SetHealth(capsule.Ready, nil)
	return nil
}
func (e *flakyEngine) WaitReady(ctx context.Context) error { return ctx.Err() }
func (e *flakyEngine) Invoke(context.Context, hostapi.Invocation) (hostapi.Verdict, error) {
	return hostapi.Verdict{}, capsule.ErrNotSupported
}
func (e *flakyEngine) Unload(context.Context) error { return nil }
func (e *flakyEngine) Health() capsule.Health       { return e.health.Health() }

// healthFixture boots the capsules of fails (one MCP server each, named
// like its capsule) under a policy of max restarts, 10ms doubling to 40ms.
// The tests drive the monitor with a clock of their own (tick).
func healthFixture(t *testing.T, max int, fails map[string]int, extra map[string][]string) (*fixture, *flaky) {
	t.Helper()
	fl := newFlaky(fails)
	f := newFixture(t, nil, fl.engines())
	for id := range fails {
		f.install(id, mcpCapsule(id, id, extra[id]...))
	}
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.rt.policy = HealthPolicy{MaxRestarts: max, Backoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}
	return f, fl
}

// ticks runs n monitor rounds, the clock advancing by step each.
func ticks(f *fixture, now *time.Time, n int, step time.Duration) {
	for range n {
		*now = now.Add(step)
		f.rt.checkHealth(context.Background(), *now)
	}
}

// A capsule whose load fails is restarted with a doubling backoff until it
// serves; its restarts show in List; a healthy capsule beside it is never
// restarted.
func TestHealthRestartsAFailedCapsuleUntilItServes(t *testing.T) {
	f, fl := healthFixture(t, 5, map[string]int{"flaky": 2, "steady": 0}, nil)
	now := time.Now()
	ticks(f, &now, 1, time.Millisecond) // noticed: first restart due in 10ms
	if s := f.status("flaky"); s.State != "failed" || !strings.HasPrefix(s.Error, "restart 1 of 5 in ") {
		t.Fatalf("flaky after it failed: %+v", s)
	}
	ticks(f, &now, 1, 5*time.Millisecond)
	if n := fl.loadsOf("flaky"); n != 1 {
		t.Fatalf("restarted before its backoff: %d loads", n)
	}
	ticks(f, &now, 1, 5*time.Millisecond) // 10ms: restart 1, fails; next in 20ms
	if n, s := fl.loadsOf("flaky"), f.status("flaky"); n != 2 || s.Restarts != 1 || !strings.HasPrefix(s.Error, "restart 2 of 5 in ") {
		t.Fatalf("after restart 1: %d loads, %+v", n, s)
	}
	ticks(f, &now, 1, 19*time.Millisecond)
	if n := fl.loadsOf("flaky"); n != 2 {
		t.Fatalf("the second restart did not wait twice as long: %d loads", n)
	}
	ticks(f, &now, 1, time.Millisecond) // restart 2 succeeds
	if s := f.status("flaky"); s.State != "ready" || s.Restarts != 2 || s.Error != "" {
		t.Fatalf("after restart 2: %+v", s)
	}
	ticks(f, &now, 20, 10*time.Millisecond)
	if fl.loadsOf("flaky") != 3 || fl.loadsOf("steady") != 1 {
		t.Fatalf("loads: flaky %d (want 3), steady %d (want 1: a healthy capsule is never restarted)", fl.loadsOf("flaky"), fl.loadsOf("steady"))
	}
	if s := f.status("flaky"); s.Restarts != 0 {
		t.Errorf("a capsule ready for a whole max backoff keeps its count: %+v", s)
	}
}

// A capsule failing every time gets max restarts and no more (a tight
// loop is bounded); List says it gave up; a reload from outside starts the
// count afresh.
func TestHealthGivesUpAfterMaxRestarts(t *testing.T) {
	f, fl := healthFixture(t, 3, map[string]int{"broken": -1}, nil)
	now := time.Now()
	ticks(f, &now, 100, 50*time.Millisecond)
	s := f.status("broken")
	if n := fl.loadsOf("broken"); n != 4 || !s.GaveUp || s.Restarts != 3 || !strings.HasPrefix(s.Error, "gave up after 3 restarts: ") || !strings.Contains(s.Error, "exited at start") {
		t.Fatalf("after 100 rounds: %d loads (want 1 + 3), %+v", n, s)
	}
	if err := f.rt.Reload(context.Background(), "broken"); err == nil {
		t.Fatal("the reload of a broken capsule succeeded")
	}
	if s := f.status("broken"); s.GaveUp || s.Restarts != 0 {
		t.Fatalf("a reload from outside kept the count: %+v", s)
	}
	ticks(f, &now, 100, 50*time.Millisecond)
	if n := fl.loadsOf("broken"); n != 5+3 {
		t.Fatalf("after the outside reload: %d loads, want 5 + 3", n)
	}
}

// An engine that fails after the capsule was ready (a server that died for
// good) has its capsule restarted.
func TestHealthRestartsACapsuleWhoseEngineFailed(t *testing.T) {
	f, fl := healthFixture(t, 5, map[string]int{"crashy": 0}, nil)
	fl.mu.Lock()
	e := fl.last["crashy"]
	fl.mu.Unlock()
	e.health.SetHealth(capsule.Failed, errors.New("server crashed"))
	now := time.Now()
	ticks(f, &now, 3, 10*time.Millisecond)
	if s := f.status("crashy"); fl.loadsOf("crashy") != 2 || s.State != "ready" || s.Restarts != 1 {
		t.Fatalf("after its engine failed: %d loads, %+v", fl.loadsOf("crashy"), s)
	}
}

// What only the operator can change is not retried: a capsule missing a
// required [env] value, or not approved.
func TestHealthLeavesWhatOnlyTheOperatorFixes(t *testing.T) {
	f, fl := healthFixture(t, 5, map[string]int{"needs-env": 0}, map[string][]string{"needs-env": {"[env]\nTOKEN = { type = \"secret\" }"}})
	f.edit("unapproved", mcpCapsule("unapproved", "unapproved"))
	if err := f.rt.Rescan(context.Background()); err != nil {
		t.Log(err)
	}
	now := time.Now()
	ticks(f, &now, 50, 50*time.Millisecond)
	for _, id := range []string{"needs-env", "unapproved"} {
		if s := f.status(id); s.State != "failed" || s.Restarts != 0 || strings.Contains(s.Error, "restart") {
			t.Errorf("%s: %+v", id, s)
		}
	}
	if n := fl.loadsOf("needs-env") + fl.loadsOf("unapproved"); n != 0 {
		t.Errorf("%d engine loads of capsules that cannot load", n)
	}
}

// WatchHealth runs the monitor on its own clock until Close, which stops
// it (TestMain's goleak check sees no goroutine left); with max_restarts
// 0 it does not start at all.
func TestWatchHealthRestartsUntilClose(t *testing.T) {
	fl := newFlaky(map[string]int{"flaky": 1})
	f := newFixture(t, nil, fl.engines())
	f.install("flaky", mcpCapsule("flaky", "flaky"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.rt.WatchHealth(HealthPolicy{MaxRestarts: 0, Backoff: time.Millisecond})
	if f.rt.healthStop != nil {
		t.Fatal("a monitor with max_restarts 0 started")
	}
	f.rt.WatchHealth(HealthPolicy{MaxRestarts: 3, Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	testutil.WaitFor(t, waitLimit, "flaky to be restarted and serve", func() bool {
		s := f.status("flaky")
		return s.State == "ready" && s.Restarts == 1
	})
	f.rt.Close(context.Background())
	if f.rt.healthStop != nil {
		t.Fatal("Close left the monitor running")
	}
}

// An engine that spent its restarts by itself (an MCP server's process,
// capsule.ErrGaveUp) is not restarted again, and List says it gave up.
func TestHealthLeavesAnEngineThatGaveUp(t *testing.T) {
	f, fl := healthFixture(t, 5, map[string]int{"spent": 0}, nil)
	fl.mu.Lock()
	e := fl.last["spent"]
	fl.mu.Unlock()
	e.health.SetHealth(capsule.Failed, fmt.Errorf("mcp server spent died 6 times in a row: %w", capsule.ErrGaveUp))
	now := time.Now()
	ticks(f, &now, 50, 50*time.Millisecond)
	if s := f.status("spent"); fl.loadsOf("spent") != 1 || s.State != "failed" || !s.GaveUp {
		t.Fatalf("%d loads, %+v", fl.loadsOf("spent"), s)
	}
}
