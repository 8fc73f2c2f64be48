package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveCommand(t *testing.T) {
	const triple = "x86_64-unknown-linux-gnu"
	capsuleDir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(capsuleDir, "bin", "server"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(capsuleDir, "fat", triple), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(capsuleDir, "fat", "aarch64-apple-darwin"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(capsuleDir, "winonly", "x86_64-pc-windows-msvc"), "x", 0o755)
	writeFile(t, filepath.Join(outside, "evil"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(outside, "fat", triple), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(capsuleDir, "escfat", "placeholder"), "", 0o644)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "evil"), filepath.Join(capsuleDir, "link-out")))
	must(os.Symlink(filepath.Join(outside, "fat"), filepath.Join(capsuleDir, "fat-out")))
	must(os.Symlink(filepath.Join(outside, "evil"), filepath.Join(capsuleDir, "escfat", triple)))
	must(os.Symlink(filepath.Join(capsuleDir, "bin", "server"), filepath.Join(capsuleDir, "link-in")))
	must(os.Symlink(filepath.Join(capsuleDir, "missing"), filepath.Join(capsuleDir, "dangling")))
	realDir, err := filepath.EvalSymlinks(capsuleDir)
	must(err)

	tests := []struct {
		name, command string
		want          string // exact result
		wantErr       error  // errors.Is target
		errHas        string // substring of the error
	}{
		{name: "absolute is used as written", command: "/usr/bin/node", want: "/usr/bin/node"},
		{name: "bare name not in capsule goes to PATH", command: "node", want: "node"},
		{name: "file inside", command: "bin/server", want: filepath.Join(realDir, "bin", "server")},
		{name: "dot-slash file inside", command: "./bin/server", want: filepath.Join(realDir, "bin", "server")},
		{name: "symlink staying inside", command: "link-in", want: filepath.Join(realDir, "bin", "server")},
		{name: "fat binary directory picks the host slice", command: "fat", want: filepath.Join(realDir, "fat", triple)},
		{name: "fat binary without a slice for this host", command: "winonly", wantErr: ErrNoSlice, errHas: triple},
		{name: "symlink leaving the capsule", command: "link-out", wantErr: ErrEscapesCapsule},
		{name: "symlinked fat directory outside", command: "fat-out", wantErr: ErrEscapesCapsule},
		{name: "slice symlinked outside", command: "escfat", wantErr: ErrEscapesCapsule, errHas: "slice"},
		{name: "dot-dot to an existing file outside", command: "../" + filepath.Base(outside) + "/evil", wantErr: ErrEscapesCapsule},
		{name: "relative path naming nothing", command: "bin/nothing", errHas: "no such file in the capsule directory"},
		{name: "dot-dot naming nothing", command: "../nothing/here", errHas: "no such file in the capsule directory"},
		{name: "dangling symlink", command: "dangling", errHas: "dangling"},
		{name: "directory not executable as such", command: "bin", wantErr: ErrNoSlice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveCommand(tt.command, capsuleDir, triple)
			if tt.wantErr == nil && tt.errHas == "" {
				if err != nil || got != tt.want {
					t.Fatalf("resolveCommand(%q) = %q, %v; want %q", tt.command, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("resolveCommand(%q) = %q, want an error", tt.command, got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("resolveCommand(%q) error %v, want %v", tt.command, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("resolveCommand(%q) error %q, want it to mention %q", tt.command, err, tt.errHas)
			}
		})
	}
}

func TestResolveCommandWithoutCapsuleDir(t *testing.T) {
	if got, err := resolveCommand("node", "", "x"); err != nil || got != "node" {
		t.Fatalf("bare name: %q, %v", got, err)
	}
	if _, err := resolveCommand("bin/server", "", "x"); err == nil {
		t.Fatal("a relative path without a capsule directory was accepted")
	}
}

func TestTripleFor(t *testing.T) {
	tests := []struct{ goos, goarch, want string }{
		{"linux", "amd64", "x86_64-unknown-linux-gnu"},
		{"linux", "arm64", "aarch64-unknown-linux-gnu"},
		{"darwin", "arm64", "aarch64-apple-darwin"},
		{"darwin", "amd64", "x86_64-apple-darwin"},
		{"windows", "amd64", "x86_64-pc-windows-msvc"},
		{"linux", "riscv64", "riscv64gc-unknown-linux-gnu"},
		{"freebsd", "amd64", "x86_64-unknown-freebsd"},
	}
	for _, tt := range tests {
		if got := tripleFor(tt.goos, tt.goarch); got != tt.want {
			t.Errorf("tripleFor(%s, %s) = %s, want %s", tt.goos, tt.goarch, got, tt.want)
		}
	}
}
