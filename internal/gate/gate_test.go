package gate

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

func TestNewEnv(t *testing.T) {
	cases := []struct {
		name  string
		caps  manifest.Capabilities
		env   Env
		error string // "" = New succeeds
	}{
		{name: "fixture", caps: manifest.Capabilities{FSRead: []string{"*", "cwd://", "home://"}}, env: fixture},
		{name: "empty env, no fs grants", caps: manifest.Capabilities{Net: []string{"*"}}},
		{name: "relative install dir", env: Env{InstallDir: "capsules/fs"}, error: "Env.InstallDir"},
		{name: "relative workspace", env: Env{Workspace: "."}, error: "Env.Workspace"},
		{name: "dotdot in homes", env: Env{HomesDir: "/a/../b"}, error: `".."`},
		{name: "NUL in workspace", env: Env{Workspace: "/w\x00"}, error: "NUL"},
		{name: "star without workspace", caps: manifest.Capabilities{FSRead: []string{"*"}}, env: Env{InstallDir: "/i"}, error: "needs Env.Workspace"},
		{name: "star on the root workspace", caps: manifest.Capabilities{FSWrite: []string{"*"}}, env: Env{Workspace: "/"}, error: "whole file system"},
		{name: "cwd without install dir", caps: manifest.Capabilities{FSRead: []string{"cwd://"}}, env: Env{Workspace: "/w"}, error: "needs Env.InstallDir"},
		{name: "home without homes", caps: manifest.Capabilities{FSWrite: []string{"home://"}}, env: Env{Workspace: "/w"}, error: "needs Env.HomesDir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(tc.caps, tc.env)
			if tc.error == "" {
				if err != nil || g == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.error) {
				t.Fatalf("New error = %v, want one containing %q", err, tc.error)
			}
		})
	}
}

func TestNewCleansEnv(t *testing.T) {
	g, err := New(manifest.Capabilities{FSRead: []string{"*"}}, Env{Workspace: "/workspace/"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := g.FSRead("default", "x")
	if err != nil || root.Dir != "/workspace" || root.Rel != "x" {
		t.Fatalf("FSRead = %+v, %v; want Dir /workspace, Rel x", root, err)
	}
	g, err = New(manifest.Capabilities{}, Env{Workspace: "/workspace"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.FSRead("default", "x")
	wantDenied(t, err, "fs_read", "(/workspace/x) is outside (nothing declared)")
}

func TestRelativeWithoutWorkspace(t *testing.T) {
	g, err := New(manifest.Capabilities{FSRead: []string{"cwd://"}}, Env{InstallDir: "/i"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"x", "."} {
		_, err = g.FSRead("default", p)
		wantDenied(t, err, "fs_read", "no workspace")
	}
	env := fixture
	env.InstallDir = ""
	g = mustGateEnv(t, manifest.Capabilities{FSRead: []string{"*"}}, env)
	_, err = g.FSRead("default", "cwd://x")
	wantDenied(t, err, "fs_read", "no install directory")
}

func mustGateEnv(t *testing.T, caps manifest.Capabilities, env Env) *Gate {
	t.Helper()
	g, err := New(caps, env)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestInert: every grant that can never match is reported, and nothing else.
func TestInert(t *testing.T) {
	g := mustGate(t, manifest.Capabilities{
		FSRead:     []string{"*", "workspace://src", "src", "/a/../b", "/w/*", "cwd://./x", "/ok"},
		FSWrite:    []string{"home://", "", "home://a//b"},
		Net:        []string{"*", "https://x.com", "x.com:443", "a.*.com", "*.10.0.0.1", "0x7f.1", "ok.com"},
		NetConnect: []string{"db:5432", "db", "*.db:1", "db:99999"},
		NetBind:    []string{"unix:*", "0.0.0.0:80", "unix:rel", "127.0.0.1:*"},
		Identity:   []string{"link", "root"},
	})
	want := []string{
		`fs_read "workspace://src"`, `fs_read "src"`, `fs_read "/a/../b"`, `fs_read "/w/*"`, `fs_read "cwd://./x"`,
		`fs_write ""`, `fs_write "home://a//b"`,
		`net "https://x.com"`, `net "x.com:443"`, `net "a.*.com"`, `net "*.10.0.0.1"`, `net "0x7f.1"`,
		`net_connect "db"`, `net_connect "*.db:1"`, `net_connect "db:99999"`,
		`net_bind "0.0.0.0:80"`, `net_bind "unix:rel"`,
		`identity "root"`,
	}
	got := g.Inert()
	if len(got) != len(want) {
		t.Fatalf("Inert() = %q\nwant entries starting %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+": ") {
			t.Errorf("Inert()[%d] = %q, want it to start %q", i, got[i], want[i]+": ")
		}
	}
	got[0] = "changed"
	if g.Inert()[0] == "changed" {
		t.Error("Inert returned the gate's own slice")
	}
}

func TestAllowPromptInjection(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		g := mustGate(t, manifest.Capabilities{AllowPromptInjection: allowed})
		if got := g.AllowPromptInjection(); got != allowed {
			t.Errorf("AllowPromptInjection() = %v with allow_prompt_injection = %v", got, allowed)
		}
	}
}

func TestDeniedErrorText(t *testing.T) {
	cases := []struct {
		err  DeniedError
		want string
	}{
		{DeniedError{"host_process", "npx-evil", "is not declared"}, "host_process denied: npx-evil is not declared"},
		{DeniedError{"host_process", "npx ", "is not declared"}, `host_process denied: "npx " is not declared`},
		{DeniedError{"fs_read", "", "is empty"}, `fs_read denied: "" is empty`},
		{DeniedError{"fs_read", "\xff", "is not valid UTF-8"}, `fs_read denied: "\xff" is not valid UTF-8`},
		{DeniedError{"fs_read", strings.Repeat("a", 300), "x"}, "fs_read denied: " + strings.Repeat("a", maxShown) + "… x"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if !errors.Is(&tc.err, ErrDenied) {
			t.Errorf("%v does not wrap ErrDenied", &tc.err)
		}
	}
	if got := list([]string{"*", "a b"}); got != `*, "a b"` {
		t.Errorf("list = %q", got)
	}
	if !slices.Equal(mustGate(t, manifest.Capabilities{}).Inert(), nil) {
		t.Error("empty capabilities have inert grants")
	}
}

// TestGateIsImmutable: the caller's slices are not the gate's.
func TestGateIsImmutable(t *testing.T) {
	caps := manifest.Capabilities{HostProcess: []string{"npx"}, Net: []string{"example.com"}, FSRead: []string{"*"}}
	g := mustGate(t, caps)
	caps.HostProcess[0], caps.Net[0], caps.FSRead[0] = "sh", "evil.com", "/"
	wantDenied(t, g.HostProcess("sh"), "host_process", "(npx)")
	wantDenied(t, g.Net("evil.com"), "net", "(example.com)")
	_, err := g.FSRead("default", "/etc/passwd")
	wantDenied(t, err, "fs_read", "is outside *")
}
