package wasm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/internal/capsulefile"
	"github.com/astrid-go/astrid/manifest"
)

// DefaultMaxComponentBytes is the largest component file read when
// Options.MaxComponentBytes is zero. A Go capsule is a few MiB; this leaves
// room for large ones while refusing a file that would exhaust memory.
const DefaultMaxComponentBytes = 64 << 20

// CheckComponentFile runs the loader's integrity check on comp, one of m's
// components, without compiling it: the file is read as the loader reads it
// (readComponent) and checked against every hash that vouches for it
// (verify). It returns the file's "sha256:<hex>". `astrid capsule check`
// and the installer call it, so that what they say loads is what load
// accepts.
func CheckComponentFile(m *manifest.Manifest, comp *manifest.Component, maxBytes int64) (string, error) {
	wasm, err := readComponent(m, comp, maxBytes)
	if err != nil {
		return "", err
	}
	if err := isWasm(comp.File, wasm); err != nil {
		return "", err
	}
	return verify(m, comp, wasm)
}

// wasmMagic opens every WebAssembly binary, module or component.
var wasmMagic = []byte("\x00asm")

// isWasm refuses a component file that is not WebAssembly, so that check
// and install say so instead of a load failing later on a file that was
// reported installed.
func isWasm(name string, b []byte) error {
	if bytes.HasPrefix(b, wasmMagic) {
		return nil
	}
	head := b[:min(len(b), 8)]
	return fmt.Errorf("component %s is not WebAssembly: it starts with %q, not the wasm magic \\0asm (build it with astrid capsule build)", name, head)
}

// readComponent reads the component's file, once: everything after works
// on these bytes, so what is hashed is what is compiled. The file must be a
// regular file inside the capsule directory, of at most maxBytes (zero:
// DefaultMaxComponentBytes), checked before it is read (capsulefile).
func readComponent(m *manifest.Manifest, comp *manifest.Component, maxBytes int64) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxComponentBytes
	}
	dir, name := m.Dir, comp.File
	if dir == "" || comp.Path != filepath.Join(m.Dir, filepath.FromSlash(comp.File)) {
		// A manifest parsed without its directory, or whose component a
		// caller pointed elsewhere (a built-in or a test's build cache):
		// the file's own directory is the root.
		dir, name = filepath.Dir(comp.Path), filepath.Base(comp.Path)
	}
	wasm, err := capsulefile.Read(dir, name, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("read component %s: %w", comp.File, err)
	}
	return wasm, nil
}

// verify checks wasm, the component's bytes, against every hash that
// vouches for it: [[component]].hash and meta.json's wasm_hash beside
// Capsule.toml. At least one must exist; a module nobody vouched for is
// not loaded. It returns "sha256:<hex>" of wasm, and only reads wasm, so
// it may run beside a merge or compile of the same bytes.
func verify(m *manifest.Manifest, comp *manifest.Component, wasm []byte) (string, error) {
	s := sha256.Sum256(wasm)
	got := "sha256:" + hex.EncodeToString(s[:])
	vouched := false
	if comp.Hash != "" {
		if comp.Hash != got {
			return "", fmt.Errorf("integrity check failed for %s: [[component]] hash is %s, the file's is %s; rebuild it (astrid capsule build) or fix the hash", comp.File, comp.Hash, got)
		}
		vouched = true
	}
	dir := m.Dir
	if dir == "" {
		dir = filepath.Dir(comp.Path)
	}
	meta, ok, err := capsulebuild.ReadMeta(dir)
	if err != nil {
		return "", fmt.Errorf("integrity check for %s: %w", comp.File, err)
	}
	// meta.json vouches for the one module astrid capsule build wrote
	// (its file); another component of the capsule needs its own hash.
	if ok && meta.WasmHash != "" && (meta.File == "" || path.Clean(meta.File) == path.Clean(filepath.ToSlash(comp.File))) {
		if meta.WasmHash != got {
			return "", fmt.Errorf("integrity check failed for %s: meta.json wasm_hash is %s, the file's is %s; the module may have been tampered with", comp.File, meta.WasmHash, got)
		}
		vouched = true
	}
	if !vouched {
		return "", fmt.Errorf("refusing to load %s (%s): no sha256 vouches for it (set [[component]] hash or build with astrid capsule build, which writes meta.json)", comp.File, got)
	}
	return got, nil
}
