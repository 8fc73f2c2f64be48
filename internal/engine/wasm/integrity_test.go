package wasm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/capsulebuild"
)

const otherHash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// loadErr loads the hostile capsule from a capsule directory laid out by
// setup and returns Load's error.
func loadErr(t *testing.T, setup func(dir string, built capsulebuild.Result) (componentHash string)) error {
	t.Helper()
	built := guest(t, "testdata/hostile")
	dir := t.TempDir()
	wasmBytes, err := os.ReadFile(built.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hostile.wasm"), wasmBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	m := hostileManifest(t)
	m.Dir = dir
	m.Components[0].Path = filepath.Join(dir, "hostile.wasm")
	m.Components[0].Hash = setup(dir, built)
	h, _ := newHarness(t, &syncBuffer{})
	_, err = h.load(t, newRuntime(t, Options{}), m, dir)
	return err
}

func TestIntegrity(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(dir string, b capsulebuild.Result) string
		wantErr []string // substrings; none means the load succeeds
	}{
		{"component hash matches", func(_ string, b capsulebuild.Result) string { return b.SHA256 }, nil},
		{"meta.json matches", func(dir string, b capsulebuild.Result) string {
			_ = capsulebuild.WriteMeta(dir, capsulebuild.Result{Wasm: filepath.Join(dir, "hostile.wasm"), SHA256: b.SHA256})
			return ""
		}, nil},
		{"component hash differs", func(_ string, b capsulebuild.Result) string { return otherHash }, []string{"integrity check failed", otherHash, "the file's is sha256:"}},
		{"meta.json differs", func(dir string, b capsulebuild.Result) string {
			_ = capsulebuild.WriteMeta(dir, capsulebuild.Result{Wasm: filepath.Join(dir, "hostile.wasm"), SHA256: otherHash})
			return b.SHA256
		}, []string{"meta.json wasm_hash is " + otherHash}},
		{"nothing vouches", func(string, capsulebuild.Result) string { return "" }, []string{"refusing to load", "no sha256 vouches"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var built capsulebuild.Result
			err := loadErr(t, func(dir string, b capsulebuild.Result) string {
				built = b
				return tt.setup(dir, b)
			})
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("load failed: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("load succeeded")
			}
			for _, want := range append(tt.wantErr, "hostile") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(tt.name, "differs") && !strings.Contains(err.Error(), built.SHA256) {
				t.Errorf("error %q does not name the file's hash %s", err, built.SHA256)
			}
		})
	}
}

func TestCacheDirMustBePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRuntime(context.Background(), Options{CacheDir: dir}); err == nil || !strings.Contains(err.Error(), "world-writable") {
		t.Fatalf("a world-writable cache was accepted: %v", err)
	}
	fresh := filepath.Join(t.TempDir(), "a", "cache")
	rt, err := NewRuntime(context.Background(), Options{CacheDir: fresh})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	fi, err := os.Stat(fresh)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("new cache dir mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}
}

func TestModuleWithoutTheABIIsRefused(t *testing.T) {
	// A valid module that exports nothing: "\0asm", version 1.
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.wasm")
	if err := os.WriteFile(path, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, _ := capsulebuild.HashFile(path)
	m := hostileManifest(t)
	m.Components[0].Path, m.Components[0].Hash = path, sum
	h, _ := newHarness(t, &syncBuffer{})
	_, err := h.load(t, newRuntime(t, Options{}), m, dir)
	if err == nil || !strings.Contains(err.Error(), "missing export _initialize") {
		t.Fatalf("a module without the ABI loaded: %v", err)
	}
}

// TestMismatchRefusedBeforeInstantiation: the hash runs beside the
// compile, and a module that fails it is refused with the integrity error
// (naming both hashes) before any instance exists, whether or not it
// compiles, and leaves nothing compiled behind.
func TestMismatchRefusedBeforeInstantiation(t *testing.T) {
	built := guest(t, "testdata/hostile")
	orig, err := os.ReadFile(built.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		tamper func([]byte) []byte
	}{
		// The last byte is in the name section: the module still compiles.
		{"valid module", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"not a module", func(b []byte) []byte { return b[:len(b)/2] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hostile.wasm")
			if err := os.WriteFile(path, tt.tamper(bytes.Clone(orig)), 0o644); err != nil {
				t.Fatal(err)
			}
			got, _ := capsulebuild.HashFile(path)
			rt := newRuntime(t, Options{})
			m := hostileManifest(t)
			m.Components[0].Path, m.Components[0].Hash = path, built.SHA256
			e := newEngine(rt, m, m.ExecutableComponent(), nil)
			err := e.load(context.Background())
			if err == nil {
				t.Fatal("a tampered module loaded")
			}
			for _, want := range []string{"integrity check failed", built.SHA256, got} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if e.pool != nil || e.compiled != nil {
				t.Error("the engine got as far as an instance pool or a compiled module")
			}
			n := 0
			rt.states.Range(func(any, any) bool { n++; return true })
			rt.mu.Lock()
			defer rt.mu.Unlock()
			if n != 0 || len(rt.compiled) != 0 {
				t.Errorf("%d instances and %d compiled modules left behind", n, len(rt.compiled))
			}
		})
	}
}
