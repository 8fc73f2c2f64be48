package sdktest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/internal/capsulebuild"
)

// WasmCapsule builds the capsule package in dir to wasm (cached across
// tests) and returns it as an operator would install it: manifest with a
// [[component]] naming id.wasm, the module and its meta.json. No native
// code is linked for it, so the kernel runs it through the wasm engine.
func WasmCapsule(t testing.TB, dir, id string, manifest []byte) Capsule {
	t.Helper()
	built, err := capsulebuild.BuildCached(context.Background(), dir, filepath.Join(os.TempDir(), "astrid-test-wasm"))
	if err != nil {
		t.Fatalf("sdktest: build %s to wasm: %v", dir, err)
	}
	module, err := os.ReadFile(built.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	file := id + ".wasm"
	meta, err := json.Marshal(capsulebuild.Meta{WasmHash: built.SHA256, File: file, ABIVersion: abi.Version})
	if err != nil {
		t.Fatal(err)
	}
	return Capsule{
		Manifest: append(slices.Clone(manifest), "\n[[component]]\nid = \""+id+"\"\nfile = \""+file+"\"\n"...),
		Files:    map[string]string{file: string(module), capsulebuild.MetaFile: string(meta)},
	}
}
