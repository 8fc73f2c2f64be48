package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// staticProblems lists what makes the ELF file at path depend on a dynamic
// loader or shared libraries: a PT_INTERP program header or any DT_NEEDED
// entry. None means the binary is static.
func staticProblems(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s as ELF: %w", path, err)
	}
	defer f.Close()
	var problems []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			problems = append(problems, "a PT_INTERP program header (it needs a dynamic loader)")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("read %s's DT_NEEDED entries: %w", path, err)
	}
	for _, l := range libs {
		problems = append(problems, "DT_NEEDED "+l)
	}
	return problems, nil
}

// The binary exactly as make build, make run and the README build it
// (scripts/build.sh) is one static file: no loader, no shared library.
func TestTheScriptBuildsAStaticBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("the check reads ELF; %s binaries are not ELF", runtime.GOOS)
	}
	bin := filepath.Join(t.TempDir(), "astrid")
	cmd := exec.Command("../../scripts/build.sh", bin)
	// The script decides how astrid is built; nothing of the test's own
	// environment may decide it instead.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/build.sh: %v\n%s", err, out)
	}
	problems, err := staticProblems(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("scripts/build.sh built a dynamic astrid: %s", strings.Join(problems, "; "))
	}
	// One binary is all there is: nothing else beside it.
	if entries, _ := os.ReadDir(filepath.Dir(bin)); len(entries) != 1 {
		t.Fatalf("scripts/build.sh built %d files, want astrid alone", len(entries))
	}
}

// The check itself catches a dynamic binary: a program using `net` built
// with cgo, which is what a plain `go build` of astrid produced.
func TestStaticCheckCatchesADynamicBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("the check reads ELF; %s binaries are not ELF", runtime.GOOS)
	}
	cc, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath(strings.TrimSpace(string(cc))); err != nil {
		t.Skipf("no C compiler (%s), so no cgo binary to check against", strings.TrimSpace(string(cc)))
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module dynamic\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"net\"\n\nfunc main() { _, _ = net.LookupHost(\"localhost\") }\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "dynamic")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	problems, err := staticProblems(bin)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(problems, "; ")
	if !strings.Contains(joined, "PT_INTERP") || !strings.Contains(joined, "DT_NEEDED") {
		t.Fatalf("a cgo binary using net was not reported dynamic: %q", joined)
	}
}
