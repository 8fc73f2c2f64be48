package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

func TestDiscover(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("notes", contextCapsule("notes", "hi"))
	f.install("a-dup", contextCapsule("echo", "taken"))
	f.install("a-notes-first", contextCapsule("notes", "sorts before the real one"))
	f.install("c-notes-again", contextCapsule("notes", "second"))
	f.install("d-broken", map[string]string{"Capsule.toml": "[package]\nname = \"Bad Name\"\n"})
	f.install("e-not-a-capsule", map[string]string{"README.md": "nothing"})
	if err := os.WriteFile(filepath.Join(f.capsules, "stray-file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cands, problems, err := Discover([]Builtin{echoBuiltin("echo")}, f.capsules)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(cands); !slices.Equal(got, []string{"echo", "notes"}) {
		t.Fatalf("candidates = %v, want the built-in then notes", got)
	}
	if !cands[0].Builtin() || cands[1].Builtin() || cands[1].Dir != filepath.Join(f.capsules, "notes") {
		t.Errorf("candidates = %+v %+v, want notes from capsules/notes", cands[0], cands[1])
	}
	real := "taken by the capsule installed at " + filepath.Join(f.capsules, "notes")
	want := map[string]string{
		"a-dup":         "taken by a built-in capsule",
		"a-notes-first": real,
		"c-notes-again": real,
		"d-broken":      "Capsule.toml",
	}
	if len(problems) != len(want) {
		t.Fatalf("problems = %v", problems)
	}
	for _, p := range problems {
		s, ok := want[filepath.Base(p.Dir)]
		if !ok || !strings.Contains(p.Err.Error(), s) {
			t.Errorf("problem %s: %v, want mention of %q", p.Dir, p.Err, s)
		}
	}
}

// Two installed capsules of one name, neither at capsules/<name>: which one
// gets the name (its KV, secrets and configuration) never goes by directory
// order, so neither loads, each naming the other.
func TestDiscoverSettlesANameOnlyByItsInstallPlace(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("a-weather", contextCapsule("weather", "newcomer"))
	f.install("b-weather", contextCapsule("weather", "installed earlier"))
	cands, problems, err := Discover(nil, f.capsules)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 0 || len(problems) != 2 {
		t.Fatalf("candidates %v, problems %v; want none loaded and two refusals", ids(cands), problems)
	}
	for _, p := range problems {
		other := "a-weather"
		if filepath.Base(p.Dir) == other {
			other = "b-weather"
		}
		if !strings.Contains(p.Err.Error(), filepath.Join(f.capsules, other)) || !strings.Contains(p.Err.Error(), "capsules/weather") {
			t.Errorf("problem %s: %v; want it to name %s and capsules/weather", p.Dir, p.Err, other)
		}
	}
}

func TestDiscoverMissingDirectoryIsEmpty(t *testing.T) {
	cands, problems, err := Discover(nil, filepath.Join(t.TempDir(), "none"))
	if err != nil || len(cands) != 0 || len(problems) != 0 {
		t.Fatalf("Discover(missing) = %v, %v, %v", cands, problems, err)
	}
}

func TestDiscoverBadBuiltinIsFatal(t *testing.T) {
	if _, _, err := Discover([]Builtin{{Manifest: []byte("[package]\n")}}, ""); err == nil {
		t.Fatal("a built-in with a broken manifest was accepted")
	}
}

func TestBootLoadsInOrderAndPublishes(t *testing.T) {
	f := newFixture(t, []Builtin{echoBuiltin("echo")}, Engines{})
	loaded := f.subscribe("astrid.v1.capsules_loaded")
	f.install("consumer", contextCapsule("consumer", "c", `[imports]`, `"x:notes" = "^1"`))
	f.install("provider", contextCapsule("provider", "p", `[exports]`, `"x:notes" = "1.2.0"`))
	f.install("orphan", contextCapsule("orphan", "o", `[imports]`, `"x:gone" = "^1"`))
	f.install("dup-tool", contextCapsule("dup-tool", "d",
		`[subscribe]`, `"tool.v1.execute.echo" = { wit = "opaque", handler = "h" }`))
	f.install("wasm-cap", map[string]string{
		"Capsule.toml": manifestText("wasm-cap", "[[component]]\nfile = \"cap.wasm\""),
		"cap.wasm":     "\x00asm",
	})
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := nextLoaded(t, loaded)
	var order []string
	for _, c := range ev.Capsules {
		order = append(order, c.ID)
	}
	// Failures found while ordering are recorded first, then loads in
	// order; the provider loads before its consumer.
	if pi, ci := slices.Index(order, "provider"), slices.Index(order, "consumer"); pi < 0 || ci < pi {
		t.Errorf("capsules_loaded order %v: provider must precede consumer", order)
	}
	wantState := map[string]string{
		"echo": "ready", "provider": "ready", "consumer": "ready",
		"orphan": "failed", "dup-tool": "failed", "wasm-cap": "failed",
	}
	for id, st := range wantState {
		if got := ev.state(id); got != st {
			t.Errorf("capsules_loaded: %s is %q, want %q (event %+v)", id, got, st, ev)
		}
	}
	if s := f.status("orphan"); !strings.Contains(s.Error, "x:gone") {
		t.Errorf("orphan error = %q, want the import named", s.Error)
	}
	if s := f.status("dup-tool"); !strings.Contains(s.Error, "cannot provide tool echo: built-in capsule echo provides it") || !strings.Contains(s.Error, "dup-tool") {
		t.Errorf("dup-tool error = %q, want both capsules named", s.Error)
	}
	if s := f.status("wasm-cap"); !strings.Contains(s.Error, "no wasm engine") || !slices.Equal(s.Engines, []string{"wasm", "static"}) {
		t.Errorf("wasm-cap = %+v", s)
	}
	if s := f.status("echo"); !slices.Equal(s.Engines, []string{"native", "static"}) || !slices.Equal(s.Tools, []string{"echo"}) || !s.Builtin {
		t.Errorf("echo = %+v", s)
	}
	if got := f.askContext("provider"); !strings.Contains(got, `"content":"p"`) {
		t.Errorf("provider's context answer = %s", got)
	}
	if _, ok := f.rt.opts.Registry.Get("dup-tool"); ok {
		t.Error("dup-tool is in the registry after failing")
	}
	if got := f.d.Interceptors("tool.v1.execute.echo"); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("interceptors of echo = %v, want only the built-in", got)
	}
}

// recordingEngine records its lifecycle in a shared journal.
type recordingEngine struct {
	name    string
	log     *[]string
	loadErr error
	surface capsule.Surface
}

func (e *recordingEngine) Name() string { return e.name }
func (e *recordingEngine) Load(context.Context) error {
	*e.log = append(*e.log, e.name+".load")
	return e.loadErr
}
func (e *recordingEngine) WaitReady(ctx context.Context) error { return ctx.Err() }
func (e *recordingEngine) Invoke(context.Context, hostapi.Invocation) (hostapi.Verdict, error) {
	return hostapi.Verdict{}, capsule.ErrNotSupported
}
func (e *recordingEngine) Unload(context.Context) error {
	*e.log = append(*e.log, e.name+".unload")
	return nil
}
func (e *recordingEngine) Health() capsule.Health   { return capsule.Health{State: capsule.Ready} }
func (e *recordingEngine) Surface() capsule.Surface { return e.surface }

func TestLoaderBuildsEnginesInOrder(t *testing.T) {
	var journal []string
	engines := Engines{
		Wasm: func(m *manifest.Manifest, _ *host.Capsule) (capsule.Engine, error) {
			return &recordingEngine{name: "wasm", log: &journal}, nil
		},
		MCP: func(srv manifest.MCPServer, _ *manifest.Manifest, _ *host.Capsule, env map[string]string) (capsule.Engine, error) {
			e := &recordingEngine{name: "mcp:" + srv.ID, log: &journal}
			if srv.ID == "bad" {
				e.loadErr = errors.New("server would not start")
			}
			return e, nil
		},
	}
	f := newFixture(t, nil, engines)
	text := manifestText("multi",
		"[[component]]\nfile = \"m.wasm\"",
		"[capabilities]\nhost_process = [\"srv\"]",
		"[[mcp_server]]\nid = \"one\"\ntype = \"stdio\"\ncommand = \"srv\"",
		"[[mcp_server]]\nid = \"other\"\ntype = \"openclaw\"",
		"[[mcp_server]]\nid = \"two\"\ntype = \"stdio\"\ncommand = \"srv\"")
	dir := f.install("multi", map[string]string{"Capsule.toml": text, "m.wasm": "\x00asm"})
	c, err := ReadCandidate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.rt.Load(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if s := f.status("multi"); !slices.Equal(s.Engines, []string{"wasm", "mcp:one", "mcp:two", "static"}) || s.State != "ready" {
		t.Errorf("multi = %+v", s)
	}
	if want := []string{"wasm.load", "mcp:one.load", "mcp:two.load"}; !slices.Equal(journal, want) {
		t.Errorf("journal = %v, want %v", journal, want)
	}

	// A failing engine rolls the others back, in reverse.
	journal = nil
	text = strings.Replace(text, "id = \"two\"", "id = \"bad\"", 1)
	dir = f.install("multi-bad", map[string]string{"Capsule.toml": strings.Replace(text, `"multi"`, `"multi-bad"`, 1), "m.wasm": "\x00asm"})
	c, err = ReadCandidate(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = f.rt.Load(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "server would not start") {
		t.Fatalf("Load = %v", err)
	}
	if want := []string{"wasm.load", "mcp:one.load", "mcp:bad.load", "mcp:one.unload", "wasm.unload"}; !slices.Equal(journal, want) {
		t.Errorf("journal = %v, want %v", journal, want)
	}
	if s := f.status("multi-bad"); s.State != "failed" {
		t.Errorf("multi-bad = %+v", s)
	}
}

func TestSurfaceToolsCollide(t *testing.T) {
	f := newFixture(t, []Builtin{echoBuiltin("echo")}, Engines{})
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	var journal []string
	m := parseManifest(t, manifestText("mcp-like"))
	// Only the engine, once loaded, knows it provides "echo".
	err := f.rt.LoadWith(context.Background(), m, "", func(*host.Capsule) ([]capsule.Engine, error) {
		return []capsule.Engine{&recordingEngine{name: "mcp:s", log: &journal, surface: capsule.Surface{
			Publish:      []string{"tool.v1.execute.echo.result"},
			Subscribe:    []string{"tool.v1.execute.echo"},
			Interceptors: []manifest.Interceptor{{Pattern: "tool.v1.execute.echo", Handler: "h", Priority: 100}},
		}}}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "mcp-like") || !strings.Contains(err.Error(), "capsule echo already provides it") {
		t.Fatalf("LoadWith = %v, want a collision naming both", err)
	}
	if !slices.Contains(journal, "mcp:s.unload") {
		t.Errorf("the colliding engine was not unloaded: %v", journal)
	}
}

func TestReservedIDRefused(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	err := f.rt.LoadWith(context.Background(), parseManifest(t, manifestText("observer")), "", func(*host.Capsule) ([]capsule.Engine, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("LoadWith(observer) = %v", err)
	}
}

func TestLoadAloneChecksNameAndImports(t *testing.T) {
	f := newFixture(t, []Builtin{echoBuiltin("echo")}, Engines{})
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir   string
		files map[string]string
		want  string
	}{
		{"takes-builtin", contextCapsule("echo", "x"), "taken by a built-in"},
		{"needs", contextCapsule("needs", "x", "[imports]", `"x:y" = "^1"`), "required import x:y ^1"},
	} {
		c, err := ReadCandidate(f.install(tc.dir, tc.files))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.rt.Load(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s) = %v, want %q", tc.dir, err, tc.want)
		}
	}
	if s := f.status("echo"); s.State != "ready" || s.Error != "" {
		t.Errorf("the built-in was disturbed: %+v", s)
	}
}

func TestUnload(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("notes", contextCapsule("notes", "hi"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	loaded := f.subscribe("astrid.v1.capsules_loaded")
	if err := f.rt.Unload(context.Background(), "notes"); err != nil {
		t.Fatal(err)
	}
	if ev := nextLoaded(t, loaded); ev.state("notes") != "" {
		t.Errorf("capsules_loaded after unload still lists notes: %+v", ev)
	}
	if len(f.d.Interceptors("static.v1.request.context")) != 0 {
		t.Error("the unloaded capsule still intercepts")
	}
	if err := f.rt.Unload(context.Background(), "notes"); err == nil {
		t.Error("a second unload succeeded")
	}
}

// toolCapsule is an installed capsule providing tool by its exact topic.
func toolCapsule(name, tool string) map[string]string {
	return contextCapsule(name, name,
		`[subscribe]`, fmt.Sprintf(`"tool.v1.execute.%s" = { wit = "opaque", handler = "h" }`, tool),
		`[publish]`, fmt.Sprintf(`"tool.v1.execute.%s.result" = "opaque"`, tool))
}

// newRecordingFixture is a fixture keeping its tool-provider record in
// record; given prev, it is prev's $ASTRID_HOME booted again (its capsules
// and their approvals).
func newRecordingFixture(t *testing.T, prev *fixture, record string) *fixture {
	t.Helper()
	f := newFixture(t, nil, Engines{})
	if prev != nil {
		f.rt.opts.CapsulesDir, f.capsules = prev.capsules, prev.capsules
		f.rt.opts.Approvals, f.book = prev.book, prev.book
	}
	f.rt.opts.ProvidersFile = record
	return f
}

// Issue 15.7: who provides a tool never depends on directory names. A
// capsule installed later whose name sorts first cannot take a tool over:
// not while the kernel runs (the loaded one keeps it), and not at the next
// boot (the recorded provider keeps it); with no record, a contested tool
// goes to no one.
func TestToolProviderDoesNotDependOnDirectoryNames(t *testing.T) {
	ctx := context.Background()
	record := filepath.Join(t.TempDir(), "tool-providers.json")
	f := newRecordingFixture(t, nil, record)
	f.install("zzz-old", toolCapsule("zzz-old", "shared"))
	if err := f.rt.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	// Hot install of a newcomer whose directory sorts first.
	dir := f.install("aaa-new", toolCapsule("aaa-new", "shared"))
	c, err := ReadCandidate(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = f.rt.Load(ctx, c)
	if err == nil || !strings.Contains(err.Error(), "aaa-new") || !strings.Contains(err.Error(), "zzz-old") || !strings.Contains(err.Error(), "tool shared") {
		t.Fatalf("hot install = %v, want a refusal naming both capsules and the tool", err)
	}
	if got := f.d.ExactInterceptors("tool.v1.execute.shared"); !slices.Equal(got, []string{"zzz-old"}) {
		t.Fatalf("after the hot install, shared is provided by %v, want [zzz-old]", got)
	}
	if err := f.rt.Reload(ctx, "zzz-old"); err != nil {
		t.Fatal(err)
	}
	if got := f.d.ExactInterceptors("tool.v1.execute.shared"); !slices.Equal(got, []string{"zzz-old"}) {
		t.Fatalf("after reloading the provider: %v, want [zzz-old]", got)
	}
	f.rt.Close(ctx)

	// The next boot, with both installed: the recorded provider keeps it.
	g := newRecordingFixture(t, f, record)
	if err := g.rt.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if got := g.d.ExactInterceptors("tool.v1.execute.shared"); !slices.Equal(got, []string{"zzz-old"}) {
		t.Fatalf("after a restart, shared is provided by %v, want [zzz-old]", got)
	}
	if s := g.status("aaa-new"); s.State != "failed" || !strings.Contains(s.Error, "capsule zzz-old already provides it") {
		t.Errorf("aaa-new after a restart = %+v, want refused naming zzz-old", s)
	}

	// Without a record (lost, or never written), neither gets it, whatever
	// the directories are called.
	h := newRecordingFixture(t, f, "")
	if err := h.rt.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.d.ExactInterceptors("tool.v1.execute.shared"); len(got) != 0 {
		t.Fatalf("with no record, shared is provided by %v, want no one", got)
	}
	for id, other := range map[string]string{"aaa-new": "zzz-old", "zzz-old": "aaa-new"} {
		if s := h.status(id); s.State != "failed" || !strings.Contains(s.Error, "capsule "+other+" declares it too") {
			t.Errorf("%s with no record = %+v, want refused naming %s", id, s, other)
		}
	}
}

// A record that names a capsule now installed elsewhere (same id, other
// directory) is not that capsule's: the tool goes to no one.
func TestToolProviderRecordNeedsTheSameDirectory(t *testing.T) {
	ctx := context.Background()
	record := filepath.Join(t.TempDir(), "tool-providers.json")
	f := newRecordingFixture(t, nil, record)
	f.install("a", toolCapsule("one", "shared"))
	f.install("b", toolCapsule("two", "shared"))
	data := fmt.Sprintf(`{"shared": {"capsule": "one", "dir": %q}}`, filepath.Join(t.TempDir(), "elsewhere"))
	if err := os.WriteFile(record, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.rt.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.d.ExactInterceptors("tool.v1.execute.shared"); len(got) != 0 {
		t.Fatalf("shared is provided by %v, want no one", got)
	}
}
