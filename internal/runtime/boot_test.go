package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

// gateEngine is an engine whose Load reports that it started, then blocks
// until its gate opens or its context ends.
type gateEngine struct {
	name    string
	journal *journal
	gate    <-chan struct{}
	health  capsule.HealthCell
}

// journal records events from concurrent loads in the order they happen.
type journal struct {
	mu     sync.Mutex
	events []string
	cond   *sync.Cond
}

func newJournal() *journal {
	j := &journal{}
	j.cond = sync.NewCond(&j.mu)
	return j
}

func (j *journal) add(ev string) {
	j.mu.Lock()
	j.events = append(j.events, ev)
	j.cond.Broadcast()
	j.mu.Unlock()
}

// waitFor blocks until every one of evs has been recorded.
func (j *journal) waitFor(evs ...string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for !containsAll(j.events, evs) {
		j.cond.Wait()
	}
}

func (j *journal) snapshot() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.events)
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func (e *gateEngine) Name() string { return e.name }
func (e *gateEngine) Load(ctx context.Context) error {
	e.journal.add(e.name + " started")
	defer e.journal.add(e.name + " finished")
	select {
	case <-e.gate:
		e.health.SetHealth(capsule.Ready, nil)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (e *gateEngine) WaitReady(ctx context.Context) error { return ctx.Err() }
func (e *gateEngine) Invoke(context.Context, hostapi.Invocation) (hostapi.Verdict, error) {
	return hostapi.Verdict{}, capsule.ErrNotSupported
}
func (e *gateEngine) Unload(context.Context) error { return nil }
func (e *gateEngine) Health() capsule.Health       { return e.health.Health() }

// mcpCapsule is an installed capsule with one stdio MCP server, extra TOML
// after it.
func mcpCapsule(name, server string, extra ...string) map[string]string {
	return map[string]string{"Capsule.toml": manifestText(name, append([]string{
		"[capabilities]\nhost_process = [\"srv\"]",
		"[[mcp_server]]\nid = \"" + server + "\"\ntype = \"stdio\"\ncommand = \"srv\"",
	}, extra...)...)}
}

// gatedMCP builds every MCP engine as a gateEngine on the gate of its
// server id (nil: opens at once).
func gatedMCP(j *journal, gates map[string]chan struct{}) Engines {
	return Engines{MCP: func(srv manifest.MCPServer, _ *manifest.Manifest, _ *host.Capsule, _ map[string]string) (capsule.Engine, error) {
		g := gates[srv.ID]
		if g == nil {
			g = make(chan struct{})
			close(g)
		}
		return &gateEngine{name: srv.ID, journal: j, gate: g}, nil
	}}
}

// Two independent slow capsules load at once: each has started before
// either finishes. Loaded one after the other, the first would wait for a
// gate that opens only once the second has started, and never finish.
func TestIndependentCapsulesLoadConcurrently(t *testing.T) {
	j := newJournal()
	gates := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	f := newFixture(t, nil, gatedMCP(j, gates))
	f.install("slow-a", mcpCapsule("slow-a", "a"))
	f.install("slow-b", mcpCapsule("slow-b", "b"))
	go func() {
		j.waitFor("a started", "b started")
		close(gates["a"])
		close(gates["b"])
	}()
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := j.snapshot()
	firstFinish := min(slices.Index(ev, "a finished"), slices.Index(ev, "b finished"))
	if slices.Index(ev, "a started") > firstFinish || slices.Index(ev, "b started") > firstFinish {
		t.Fatalf("events %v: both loads must start before either finishes", ev)
	}
	for _, id := range []string{"slow-a", "slow-b"} {
		if s := f.status(id); s.State != "ready" {
			t.Errorf("%s: %+v", id, s)
		}
	}
}

// A capsule starts loading only once the providers of its imports have
// finished, while an unrelated one does not wait for them.
func TestALoadWaitsForItsProvidersOnly(t *testing.T) {
	j := newJournal()
	gates := map[string]chan struct{}{"prov": make(chan struct{})}
	f := newFixture(t, nil, gatedMCP(j, gates))
	f.install("provider", mcpCapsule("provider", "prov", `[exports]`, `"x:thing" = "1.0.0"`))
	f.install("consumer", mcpCapsule("consumer", "cons", `[imports]`, `"x:thing" = "^1"`))
	f.install("other", mcpCapsule("other", "other"))
	go func() {
		// The unrelated capsule loads while the provider is held.
		j.waitFor("prov started", "other finished")
		close(gates["prov"])
	}()
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := j.snapshot()
	if slices.Index(ev, "cons started") < slices.Index(ev, "prov finished") {
		t.Fatalf("events %v: the consumer started before its provider finished", ev)
	}
	for _, id := range []string{"provider", "consumer", "other"} {
		if s := f.status(id); s.State != "ready" {
			t.Errorf("%s: %+v", id, s)
		}
	}
}

// Start returns while an installed capsule is still loading; WaitForTool
// waits for the capsules that may provide the tool and not for the others;
// Close cancels the load still in progress.
func TestStartDoesNotWaitForInstalledCapsules(t *testing.T) {
	j := newJournal()
	hung := make(chan struct{}) // never opened: a server that never answers
	f := newFixture(t, []Builtin{echoBuiltin("echo")}, gatedMCP(j, map[string]chan struct{}{"hung": hung}))
	f.install("hung", mcpCapsule("hung", "hung"))
	f.install("quick", mcpCapsule("quick", "quick",
		"[subscribe]", `"tool.v1.execute.quick_tool" = { wit = "opaque", handler = "h" }`))
	if err := f.rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := f.status("echo"); s.State != "ready" {
		t.Fatalf("built-in echo after Start: %+v", s)
	}
	ctx := context.Background()
	for _, tool := range []string{"echo", "quick_tool"} {
		if err := f.rt.WaitForTool(ctx, tool); err != nil {
			t.Fatal(err)
		}
	}
	if s := f.status("quick"); s.State != "ready" {
		t.Errorf("quick after WaitForTool: %+v", s)
	}
	j.waitFor("hung started")
	if s := f.status("hung"); s.State != "loading" {
		t.Fatalf("hung: %+v, want still loading", s)
	}
	// Its own tools wait for it; a cancelled wait says which capsule.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.rt.WaitForTool(cctx, "hung:anything"); err == nil || !strings.Contains(err.Error(), "hung") {
		t.Fatalf("WaitForTool(hung:anything) = %v, want an error naming hung", err)
	}
	if err := f.rt.Wait(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want cancelled", err)
	}
	f.rt.Close(ctx) // must cancel the hung load, not wait for it
	if got := j.snapshot(); !slices.Contains(got, "hung finished") {
		t.Fatalf("events %v: Close returned with the hung load still running", got)
	}
}

// Two installed MCP servers of one id would offer the same tools, known
// only once they run. Who gets them is settled before anything loads, by
// the provider record, never by directory names or by which server is
// ready first; without a record, neither loads.
func TestRivalMCPServersAreSettledBeforeLoading(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		t.Run(fmt.Sprintf("recorded=%v", recorded), func(t *testing.T) {
			j := newJournal()
			f := newFixture(t, nil, gatedMCP(j, nil))
			f.install("a-first", mcpCapsule("a-first", "shared"))
			f.install("b-second", mcpCapsule("b-second", "shared"))
			if recorded {
				record := filepath.Join(t.TempDir(), "tool-providers.json")
				data := `{"shared:t": {"capsule": "b-second", "dir": "` + filepath.Join(f.capsules, "b-second") + `"}}`
				if err := os.WriteFile(record, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
				f.rt.opts.ProvidersFile = record
			}
			if err := f.rt.Boot(context.Background()); err != nil {
				t.Fatal(err)
			}
			a, b := f.status("a-first"), f.status("b-second")
			if recorded {
				if b.State != "ready" || a.State == "ready" || !strings.Contains(a.Error, "capsule b-second already provides it") {
					t.Fatalf("with b-second recorded: a-first %+v, b-second %+v", a, b)
				}
				return
			}
			if a.State == "ready" || b.State == "ready" || !strings.Contains(a.Error, "b-second declares it too") || !strings.Contains(b.Error, "a-first declares it too") {
				t.Fatalf("with no record: a-first %+v, b-second %+v; want both refused naming each other", a, b)
			}
		})
	}
}
