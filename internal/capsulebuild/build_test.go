package capsulebuild

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuildEnvForcesTheTarget(t *testing.T) {
	env := buildEnv([]string{"PATH=/bin", "GOFLAGS=-race -tags=evil", "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1", "GOWORK=/x/go.work", "HOME=/h"}, "off")
	want := []string{"PATH=/bin", "HOME=/h", "GOFLAGS=", "CGO_ENABLED=0", "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off"}
	if !slices.Equal(env, want) {
		t.Errorf("buildEnv = %q, want %q", env, want)
	}
}

func TestShimServesThePackage(t *testing.T) {
	s := string(Shim("example.com/x/mycap"))
	for _, want := range []string{`capsule "example.com/x/mycap"`, `"` + Module + `/sdk"`, "sdk.Serve(capsule.New())", "func main() {}", "package main"} {
		if !strings.Contains(s, want) {
			t.Errorf("shim lacks %q:\n%s", want, s)
		}
	}
}

func TestEnclosingModule(t *testing.T) {
	root, path, err := enclosingModule(".")
	if err == nil {
		t.Fatalf("a relative dir should not be resolved: %s %s", root, path)
	}
	abs, _ := filepath.Abs(".")
	root, path, err = enclosingModule(abs)
	if err != nil || path != Module || filepath.Join(root, "internal", "capsulebuild") != abs {
		t.Errorf("enclosingModule = %s, %s, %v", root, path, err)
	}
	if _, _, err := enclosingModule(t.TempDir()); err == nil {
		t.Error("a directory outside any module was accepted")
	}
}

// A capsule in its own module builds against this checkout through the
// generated go.work, and meta.json records the module's hash.
func TestBuildOutsideTheModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/extcap\n\ngo 1.26\n\nrequire " + Module + " v0.0.0\n",
		"cap.go": "package extcap\n\nimport \"" + Module + "/sdk\"\n\nfunc New() *sdk.Capsule { return sdk.New(\"external\") }\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOFLAGS", "-tags=broken_on_purpose -race") // must be cleared
	r, err := Build(context.Background(), Options{Dir: dir, Out: filepath.Join(dir, "extcap.wasm")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(r.Wasm)
	if err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Fatalf("output is not a wasm module (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, shimDir)); !os.IsNotExist(err) {
		t.Errorf("the shim was written into the capsule directory: %v", err)
	}
	if err := WriteMeta(dir, r); err != nil {
		t.Fatal(err)
	}
	m, ok, err := ReadMeta(dir)
	if err != nil || !ok || m.WasmHash != r.SHA256 || m.File != "extcap.wasm" || !strings.HasPrefix(m.WasmHash, "sha256:") {
		t.Errorf("meta.json = %+v, %v, %v; want hash %s", m, ok, err, r.SHA256)
	}
}

func TestBuildReportsCompileErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/bad\n\ngo 1.26\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "bad.go"), []byte("package bad\n\nfunc New() int { return \"x\" }\n"), 0o644)
	_, err := Build(context.Background(), Options{Dir: dir, Out: filepath.Join(dir, "x.wasm")})
	if err == nil || !strings.Contains(err.Error(), "example.com/bad") {
		t.Fatalf("a broken capsule built, or the error does not name it: %v", err)
	}
}
