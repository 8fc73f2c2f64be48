package manifest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

// conformanceDir holds upstream's manifests and EXPECTED.md, beside the
// repository (../shared/conformance/manifests from its root).
const conformanceDir = "../../shared/conformance/manifests"

func loadConformance(t *testing.T, name string) (*Manifest, Diagnostics) {
	t.Helper()
	path := testutil.NeedShared(t, filepath.Join(conformanceDir, name))
	m, diags := Load(path)
	if m == nil {
		t.Fatalf("Load(%s) = nil manifest: %v", name, diags)
	}
	return m, diags
}

// find returns the diagnostics of severity s whose message contains every
// part.
func find(diags Diagnostics, s Severity, parts ...string) Diagnostics {
	var out Diagnostics
	for _, d := range diags {
		if d.Severity != s {
			continue
		}
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(d.Message, p) }) {
			out = append(out, d)
		}
	}
	return out
}

// wantAt asserts exactly one diagnostic of severity s mentioning parts, at line:col.
func wantAt(t *testing.T, diags Diagnostics, s Severity, line, col int, parts ...string) {
	t.Helper()
	got := find(diags, s, parts...)
	if len(got) != 1 {
		t.Errorf("want one %s containing %q, got %d in:\n%s", s, parts, len(got), render(diags))
		return
	}
	if got[0].Line != line || got[0].Col != col {
		t.Errorf("%s containing %q at %d:%d, want %d:%d", s, parts, got[0].Line, got[0].Col, line, col)
	}
}

func render(diags Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

func assertLoadsClean(t *testing.T, diags Diagnostics) {
	t.Helper()
	if err := diags.Err(true); err != nil {
		t.Errorf("want no errors or warnings, got:\n%v", err)
	}
}

func TestConformanceReact(t *testing.T) {
	m, diags := loadConformance(t, "capsule-react.toml")
	assertLoadsClean(t, diags)
	if m.ID() != "astrid-capsule-react" {
		t.Errorf("ID = %q", m.ID())
	}
	wantImports := []Import{
		{Name: "astrid:llm", Requirement: "^1.0"},
		{Name: "astrid:session", Requirement: "^1.0"},
		{Name: "astrid:spark", Requirement: "^1.0"},
		{Name: "astrid:context", Requirement: "^1.0"},
	}
	if !slices.Equal(m.Imports, wantImports) {
		t.Errorf("Imports = %+v, want %+v", m.Imports, wantImports)
	}
	if n := len(m.PublishPatterns()); n != 10 {
		t.Errorf("%d publish patterns, want 10", n)
	}
	if n := len(m.SubscribePatterns()); n != 13 {
		t.Errorf("%d subscribe patterns, want 13", n)
	}
	ics := m.Interceptors()
	if len(ics) != 10 {
		t.Fatalf("%d interceptors, want 10", len(ics))
	}
	for _, ic := range ics {
		if ic.Priority != 100 {
			t.Errorf("interceptor %s priority %d, want 100", ic.Pattern, ic.Priority)
		}
	}
	if ics[0] != (Interceptor{Pattern: "user.v1.prompt", Handler: "handle_user_prompt", Priority: 100}) {
		t.Errorf("first interceptor = %+v", ics[0])
	}
	if e := m.Publish[2]; e.Pattern != "agent.v1.response" || e.WIT != "TODO" {
		t.Errorf(`wit = "TODO" not kept as a local record name: %+v`, e)
	}
	if got := m.Engines(); !slices.Equal(got, []string{"wasm", "static"}) {
		t.Errorf("Engines = %v", got)
	}
}

func TestConformanceAdversarial(t *testing.T) {
	m, diags := loadConformance(t, "astrid-capsule-adversarial.toml")
	assertLoadsClean(t, diags)
	if got := m.PublishPatterns(); !slices.Equal(got, []string{"cli.v1.command.result.*", "session.v1.response.list.*"}) {
		t.Errorf("publish ACL = %v", got)
	}
	if got := m.SubscribePatterns(); !slices.Equal(got, []string{"cli.v1.command.run.astrid-capsule-adversarial", "session.v1.request.list"}) {
		t.Errorf("subscribe ACL = %v", got)
	}
	if n := len(m.Interceptors()); n != 0 {
		t.Errorf("%d interceptors, want 0 (no entry has a handler)", n)
	}
	if !m.Capabilities.Uplink {
		t.Error("uplink not granted")
	}
	home := []string{"home://adversarial-lifecycle-home-mounted"}
	if !slices.Equal(m.Capabilities.FSRead, home) || !slices.Equal(m.Capabilities.FSWrite, home) {
		t.Errorf("fs grants = %v / %v", m.Capabilities.FSRead, m.Capabilities.FSWrite)
	}
	if len(m.Commands) != 6 {
		t.Fatalf("%d commands, want 6", len(m.Commands))
	}
	for _, c := range m.Commands {
		if c.Kind != CommandCLI {
			t.Errorf("command %s kind %q, want cli", c.Name, c.Kind)
		}
	}
	if len(m.Env) != 1 || m.Env[0].Description != "runtime E2E lifecycle probe" || *m.Env[0].Default != "runtime-lifecycle-default" {
		t.Errorf("env = %+v", m.Env)
	}
}

func TestConformanceConcurrency(t *testing.T) {
	m, diags := loadConformance(t, "astrid-capsule-concurrency.toml")
	err := diags.Err(false)
	if err == nil {
		t.Fatal("loads, want the astrid-version error")
	}
	wantAt(t, diags, Error, 15, 18, ">=0.10.4", RuntimeVersion)
	if n := diags.Count(Error); n != 1 {
		t.Errorf("%d errors, want only the version error:\n%s", n, render(diags))
	}
	wantAt(t, diags, Warning, 24, 1, "bind_workers", "no effect")
	if !slices.Equal(m.Capabilities.NetBind, []string{"127.0.0.1:18231"}) {
		t.Errorf("net_bind = %v", m.Capabilities.NetBind)
	}
}

func TestConformanceIdentity(t *testing.T) {
	m, diags := loadConformance(t, "capsule-identity.toml")
	if err := diags.Err(false); err != nil {
		t.Fatalf("does not load: %v", err)
	}
	wantAt(t, diags, Warning, 18, 1, "ipc_publish", "[publish]")
	wantAt(t, diags, Warning, 20, 3, "[[interceptor]]", "[subscribe]", "handle_build_request")
	wantAt(t, diags, Warning, 24, 3, "[[interceptor]]", "[subscribe]", "handle_command")
	wantAt(t, diags, Warning, 12, 29, "fs_read", "workspace://", "not a recognised path scheme", "matches nothing")
	wantAt(t, diags, Warning, 12, 58, "fs_write", "workspace://", "not a recognised path scheme")
	if n := diags.Count(Warning); n != 5 {
		t.Errorf("%d warnings, want 5:\n%s", n, render(diags))
	}
	if !slices.Equal(m.Exports, []Export{{Name: "astrid:spark", Version: "1.0.0"}}) {
		t.Errorf("Exports = %+v", m.Exports)
	}
	ws := []string{"workspace://"}
	if !slices.Equal(m.Capabilities.FSRead, ws) || !slices.Equal(m.Capabilities.FSWrite, ws) {
		t.Errorf("component capabilities not merged: %+v", m.Capabilities)
	}
	if len(m.PublishPatterns()) != 0 || len(m.Interceptors()) != 0 {
		t.Errorf("publish ACL %v, interceptors %v: want both empty", m.PublishPatterns(), m.Interceptors())
	}
}

func TestConformanceOpenAICompat(t *testing.T) {
	m, diags := loadConformance(t, "capsule-openai-compat.toml")
	if err := diags.Err(false); err != nil {
		t.Fatalf("does not load: %v", err)
	}
	wantAt(t, diags, Warning, 14, 2, "[dependencies]")
	wantAt(t, diags, Warning, 26, 3, "[[llm_provider]]")
	wantAt(t, diags, Warning, 31, 3, "[[interceptor]]", "handle_llm_request")
	wantAt(t, diags, Warning, 19, 1, "ipc_publish")
	wantAt(t, diags, Warning, 23, 21, "base_url", `"string"`, `"text"`)
	wantAt(t, diags, Warning, 24, 18, "model", `"string"`, `"text"`)
	if n := diags.Count(Warning); n != 6 {
		t.Errorf("%d warnings, want 6:\n%s", n, render(diags))
	}
	types := map[string]string{}
	for _, e := range m.Env {
		types[e.Key] = e.Type
	}
	if types["api_key"] != EnvSecret || types["base_url"] != EnvText || types["model"] != EnvText {
		t.Errorf("env types = %v", types)
	}
	if !slices.Equal(m.Capabilities.Net, []string{"*"}) {
		t.Errorf("net = %v, want [*]", m.Capabilities.Net)
	}
	if err := diags.Err(true); err == nil {
		t.Error("strict mode loads a manifest with warnings")
	}
}
