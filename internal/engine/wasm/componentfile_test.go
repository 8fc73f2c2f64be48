//go:build unix

package wasm

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The loader reads a component only if it is a regular file inside the
// capsule directory and within the size limit, checked before reading: a
// FIFO would hang the load, /dev/zero would exhaust memory, and a link out
// would load code from elsewhere.
func TestComponentFileIsCheckedBeforeItIsRead(t *testing.T) {
	module := []byte("\x00asm\x01\x00\x00\x00")
	const sum = "sha256:93a44bbb96c751218e4c00d479e4c14358122a389acca16205b1e4d0dc5f9476"
	outside := filepath.Join(t.TempDir(), "elsewhere.wasm")
	if err := os.WriteFile(outside, module, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func(path string) error
		opts  Options
		want  string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, Options{}, "not a regular file"},
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, Options{}, "escapes"},
		{"link outside", func(p string) error { return os.Symlink(outside, p) }, Options{}, "escapes"},
		{"over the limit", func(p string) error { return os.WriteFile(p, module, 0o644) }, Options{MaxComponentBytes: 4}, "larger than the 4-byte limit"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, Options{}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "hostile.wasm")
			if err := tt.setup(path); err != nil {
				t.Fatal(err)
			}
			m := hostileManifest(t)
			m.Dir = dir
			m.Components[0].Path, m.Components[0].Hash = path, sum
			h, _ := newHarness(t, &syncBuffer{})
			_, err := h.load(t, newRuntime(t, tt.opts), m, dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("load = %v, want an error with %q", err, tt.want)
			}
			if _, err := CheckComponentFile(m, m.ExecutableComponent(), int64(tt.opts.MaxComponentBytes)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckComponentFile = %v, want an error with %q", err, tt.want)
			}
		})
	}
}
