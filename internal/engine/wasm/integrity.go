package wasm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/manifest"
)

// readVerified reads the component's file and checks it (verify).
func readVerified(m *manifest.Manifest, comp *manifest.Component) ([]byte, string, error) {
	wasm, err := readComponent(comp)
	if err != nil {
		return nil, "", err
	}
	sum, err := verify(m, comp, wasm)
	if err != nil {
		return nil, "", err
	}
	return wasm, sum, nil
}

// readComponent reads the component's file, once: everything after works
// on these bytes, so what is hashed is what is compiled.
func readComponent(comp *manifest.Component) ([]byte, error) {
	wasm, err := os.ReadFile(comp.Path)
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
	if ok && meta.WasmHash != "" {
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
