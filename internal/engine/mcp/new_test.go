package mcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/gate"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

// newFor parses a capsule with one server and returns New's answer. The
// manifest check refuses most of these manifests too; the engine is tested
// on the best-effort reading regardless, because it must not rely on a check
// made elsewhere (a manifest can reach it by other paths, such as reload).
func newFor(t *testing.T, dir string, hostProcess []string, srv string) (*Engine, error) {
	t.Helper()
	var grants []string
	for _, g := range hostProcess {
		grants = append(grants, fmt.Sprintf("%q", g))
	}
	src := fmt.Sprintf("[package]\nname = \"near-miss\"\nversion = \"0.1.0\"\n\n[capabilities]\nhost_process = [%s]\n\n[[mcp_server]]\n%s\n",
		strings.Join(grants, ", "), srv)
	m, _ := manifest.Parse([]byte(src), "Capsule.toml", dir)
	if m == nil || len(m.MCPServers) != 1 {
		t.Fatalf("no manifest reading for:\n%s", src)
	}
	h, err := host.NewCapsule(host.Deps{}, m, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(m.MCPServers[0], m, h, Options{})
}

// TestHostProcessNearMisses: the command is compared with host_process
// exactly as declared, before resolution, so nothing that merely resembles
// a grant, or resolves to a granted file, gets through; and a refused
// command is never resolved (the error is the gate's, even when resolution
// would also have failed).
func TestHostProcessNearMisses(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(dir, "bin", "npx-malicious"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(dir, "bin", "tool"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(outside, "evil"), "#!/bin/sh\n", 0o755)
	if err := os.Symlink(filepath.Join(outside, "evil"), filepath.Join(dir, "npx2")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		grants  []string
		command string
	}{
		{"longer name sharing the prefix", []string{"npx"}, "./bin/npx-malicious"},
		{"absolute path of a granted bare name", []string{"node"}, "/usr/bin/node"},
		{"bare name of a granted absolute path", []string{"/usr/bin/node"}, "node"},
		{"case differs", []string{"node"}, "Node"},
		{"dot-slash spelling of a granted path", []string{"bin/tool"}, "./bin/tool"},
		{"trailing space", []string{"node"}, "node "},
		{"grant with arguments", []string{"node server.js"}, "node"},
		{"escaping symlink refused by the gate first", []string{"npx"}, "npx2"},
		{"no grants at all", nil, "node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := newFor(t, dir, tt.grants, fmt.Sprintf("id = \"s\"\ntype = \"stdio\"\ncommand = %q", tt.command))
			if err == nil {
				t.Fatalf("command %q with host_process %q was accepted (resolved to %s)", tt.command, tt.grants, e.Command())
			}
			if !errors.Is(err, gate.ErrDenied) {
				t.Fatalf("command %q: error %v is not the gate's denial", tt.command, err)
			}
			if errors.Is(err, ErrEscapesCapsule) {
				t.Fatalf("command %q was resolved before the gate refused it: %v", tt.command, err)
			}
		})
	}
}

func TestNewAcceptsAndResolves(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "fat", targetTriple()), "#!/bin/sh\n", 0o755)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newFor(t, dir, []string{"fat"}, "id = \"s\"\ntype = \"stdio\"\ncommand = \"fat\"")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(real, "fat", targetTriple()); e.Command() != want {
		t.Fatalf("Command() = %s, want %s", e.Command(), want)
	}
	if e.Name() != "mcp:s" {
		t.Fatalf("Name() = %s", e.Name())
	}
}

func TestNewRefusesEntriesWithoutAnEngine(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, srv, errHas string }{
		{"not stdio", "id = \"s\"\ntype = \"wasm-ipc\"\ncommand = \"node\"", "stdio"},
		{"no type", "id = \"s\"\ncommand = \"node\"", "stdio"},
		{"no command", "id = \"s\"\ntype = \"stdio\"", "needs a command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newFor(t, dir, []string{"node"}, tt.srv)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("New = %v, want an error mentioning %q", err, tt.errHas)
			}
		})
	}
}
