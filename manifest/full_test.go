package manifest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyFull copies testdata/full into a temporary capsule directory and adds
// the component file, which cannot be committed (*.wasm is ignored).
func copyFull(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/full")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "full.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// uplinkWarning is the one diagnostic of the full manifest: it declares an
// [[uplink]] but imports interfaces, which an uplink capsule may not, so it
// cannot hold the uplink grant either.
const uplinkWarning = "capabilities.uplink is false"

func TestFullManifestHasNoDiagnostics(t *testing.T) {
	m, diags := Load(copyFull(t))
	if len(diags) != 1 || diags[0].Severity != Warning || !strings.Contains(diags[0].Message, uplinkWarning) {
		t.Fatalf("want only the uplink warning, got:\n%s", render(diags))
	}
	if m.ID() != "full-capsule" || m.Package.Version != "1.2.3-rc.1+build.5" || *m.Package.Publish {
		t.Errorf("package = %+v", m.Package)
	}
	if string(m.Package.Metadata) != `{"tool":{"flags":[true,false],"ratio":0.5,"setting":1}}` {
		t.Errorf("metadata = %s", m.Package.Metadata)
	}
	wantImports := []Import{
		{Name: "astrid:session", Requirement: "^1.0"},
		{Name: "astrid:kv", Requirement: "1.2", Optional: true},
		{Name: "astrid:llm", Requirement: "~1.4.2"},
	}
	if !slices.Equal(m.Imports, wantImports) {
		t.Errorf("imports = %+v", m.Imports)
	}
	if !slices.Equal(m.Exports, []Export{{"full:notes", "1.0.0"}, {"full:search", "0.3.1"}}) {
		t.Errorf("exports = %+v", m.Exports)
	}
	if got := m.Interceptors(); !slices.Equal(got, []Interceptor{
		{"tool.v1.execute.search", "tool_execute_search", 10},
		{"tool.v1.request.describe", "tool_describe", DefaultPriority},
	}) {
		t.Errorf("interceptors = %+v", got)
	}
	if got := m.SubscribePatterns(); len(got) != 4 || got[3] != "astrid.v1.watchdog.tick" {
		t.Errorf("subscribe ACL = %v", got)
	}
	if e := m.Publish[2]; !e.Fanout || e.Tag != "v1" || e.WIT != WITOpaque {
		t.Errorf("publish entry = %+v", e)
	}
	// Component capabilities are merged into the capsule's: united, no duplicates.
	if got := m.Capabilities.Net; !slices.Equal(got, []string{"*.example.com", "api.example.com"}) {
		t.Errorf("net = %v", got)
	}
	if got := m.Capabilities.Kv; !slices.Equal(got, []string{"notes"}) {
		t.Errorf("kv = %v", got)
	}
	if got := m.Engines(); !slices.Equal(got, []string{"wasm", "mcp:files", "static"}) {
		t.Errorf("engines = %v", got)
	}
	ec := m.ExecutableComponent()
	if ec == nil || ec.Path != filepath.Join(m.Dir, "bin", "full.wasm") {
		t.Errorf("executable component = %+v", ec)
	}
	env := map[string]EnvVar{}
	for _, e := range m.Env {
		env[e.Key] = e
	}
	if d := env["RETRIES"].Default; d == nil || *d != "3" {
		t.Errorf("non-string default not kept as JSON text: %v", d)
	}
	if o := env["MODEL"].OptionsFrom; o == nil || o.Select != "models[].name" || !slices.Equal(o.After, []string{"API_KEY", "REGION"}) {
		t.Errorf("options_from = %+v", o)
	}
	if len(m.Commands) != 2 || m.Commands[0].Kind != CommandSlash || m.Commands[1].Kind != CommandCLI {
		t.Errorf("commands = %+v", m.Commands)
	}
	if len(m.Skills) != 1 || len(m.Uplinks) != 1 || len(m.ContextFiles) != 1 || len(m.Tools) != 2 || !m.Capabilities.AllowPromptInjection {
		t.Errorf("sections lost: %+v", m)
	}
	if m.Tools[0].Mutable || m.Tools[0].AsksApproval || !m.Tools[1].Mutable || !m.Tools[1].AsksApproval {
		t.Errorf("tool flags: %+v", m.Tools)
	}
}

func TestHashMismatchIsAnError(t *testing.T) {
	dir := copyFull(t)
	if err := os.WriteFile(filepath.Join(dir, "bin", "full.wasm"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags := Load(dir)
	wantAt(t, diags, Error, 26, 8, "has hash sha256:", "but the manifest says")
}

func TestMissingFilesAreWarnings(t *testing.T) {
	dir := copyFull(t)
	for _, f := range []string{"bin/full.wasm", "skills/summarise.md", "context/style.md", "commands/deploy.toml"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	_, diags := Load(filepath.Join(dir, FileName))
	if diags.HasErrors() || diags.Count(Warning) != 5 {
		t.Fatalf("want 5 warnings (4 files, the uplink) and no error, got:\n%s", render(diags))
	}
	wantAt(t, diags, Warning, 26, 8, "component file", "does not exist", "build it")
	// Parse with no directory looks for nothing.
	data, _ := os.ReadFile(filepath.Join(dir, FileName))
	if _, diags := Parse(data, FileName, ""); len(diags) != 1 {
		t.Errorf("Parse without dir: %s", render(diags))
	}
}

func TestLoadMissingManifest(t *testing.T) {
	m, diags := Load(t.TempDir())
	if m != nil || !diags.HasErrors() {
		t.Fatalf("Load(empty dir) = %v, %v", m, diags)
	}
}
