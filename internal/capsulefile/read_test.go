//go:build unix

package capsulefile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Every way an installed capsule's file could hang the kernel, exhaust its
// memory or lead it out of the capsule directory is refused, promptly: the
// test would hang on the FIFO or read /dev/zero forever if it were not.
func TestReadRefusesHostileFiles(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "capsule")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(parent, "outside.wasm")
	if err := os.WriteFile(outside, []byte("not yours"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.wasm", []byte("module"))
	write("huge.wasm", bytes.Repeat([]byte{0}, 4096))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	link("/dev/zero", "zero.wasm")
	link("ok.wasm", "inside-link.wasm")
	link("../capsule/ok.wasm", "round-trip.wasm") // out and back in: os.Root refuses it
	link(outside, "abs-out.wasm")
	link("../outside.wasm", "rel-out.wasm")
	link("missing.wasm", "dangling.wasm")
	link("loop-b.wasm", "loop-a.wasm")
	link("loop-a.wasm", "loop-b.wasm")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link("..", "sub/up")
	link(parent, "parent-dir")

	const max = 1024
	tests := []struct {
		name string
		want string // substring of the error; "" reads fine
		is   error
	}{
		{"ok.wasm", "", nil},
		{"inside-link.wasm", "", nil},
		{"sub/up/ok.wasm", "", nil},
		{"fifo.wasm", "not a regular file", ErrNotRegular},
		{"zero.wasm", "escapes", nil},
		{"abs-out.wasm", "escapes", nil},
		{"rel-out.wasm", "escapes", nil},
		{"round-trip.wasm", "escapes", nil},
		{"parent-dir/outside.wasm", "escapes", nil},
		{"sub/up/../outside.wasm", "escapes", nil},
		{"huge.wasm", "larger than the 1024-byte limit", ErrTooLarge},
		{"dangling.wasm", "", fs.ErrNotExist},
		{"loop-a.wasm", "", nil},
		{"sub", "not a regular file", ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Read(dir, tt.name, max)
			if tt.want == "" && tt.is == nil && !strings.HasPrefix(tt.name, "loop") {
				if err != nil || string(data) != "module" {
					t.Fatalf("Read = %q, %v; want the module", data, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Read succeeded with %d bytes", len(data))
			}
			if tt.want != "" && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			if errors.Is(err, ErrTooLarge) {
				return // Hash streams and Stat reads nothing: no size limit
			}
			if _, herr := Hash(dir, tt.name); herr == nil {
				t.Errorf("Hash accepted what Read refuses")
			}
			if _, serr := Stat(dir, tt.name); serr == nil {
				t.Errorf("Stat accepted what Read refuses")
			}
		})
	}
}

// A file that grows past the limit between the size check and the read is
// still refused, not read whole.
func TestReadNoticesGrowth(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := ReadIn(root, "f", 10); err != nil {
		t.Fatalf("a file at the limit: %v", err)
	}
	if _, err := ReadIn(root, "f", 9); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a file over the limit: %v", err)
	}
	sum, err := Hash(dir, "f")
	if err != nil || sum != "sha256:84d89877f0d4041efb6bf91a16f0248f2fd573e6af05c19f96bedb9f882f7882" {
		t.Fatalf("Hash = %s, %v", sum, err)
	}
}
