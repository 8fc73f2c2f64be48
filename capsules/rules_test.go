package capsules

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/astrid-go/astrid"

// allowedImports is what a built-in capsule may import directly (DESIGN §4):
// the capsule API and standard packages that do no I/O and start nothing.
var allowedImports = []string{
	module + "/sdk", module + "/ipc", module + "/hostapi",
	"bytes", "embed", "encoding/base64", "encoding/hex", "encoding/json", "errors", "fmt",
	"math", "path", "slices", "sort", "strconv", "strings", "unicode", "unicode/utf8",
}

// allowedModuleDeps are the only packages of this module a capsule may
// reach, directly or not: the capsule API and the leaf helpers it is built
// on (DESIGN §3).
var allowedModuleDeps = []string{module + "/sdk", module + "/ipc", module + "/hostapi", module + "/internal/abi", module + "/internal/jsonscan"}

type goPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
	GoFiles    []string
	Dir        string
}

func capsulePackages(t *testing.T) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []goPackage
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.ImportPath != module+"/capsules" {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) < 2 {
		t.Fatalf("found %d capsule packages, expected at least router and fs", len(pkgs))
	}
	return pkgs
}

func TestCapsuleImportsStayInAllowlist(t *testing.T) {
	for _, p := range capsulePackages(t) {
		for _, imp := range p.Imports {
			if !slices.Contains(allowedImports, imp) {
				t.Errorf("%s imports %s, which is not in the built-in capsule allowlist", p.ImportPath, imp)
			}
		}
		for _, dep := range p.Deps {
			if strings.HasPrefix(dep, module+"/") && !slices.Contains(allowedModuleDeps, dep) {
				t.Errorf("%s depends on %s (only sdk, ipc, hostapi and leaf helpers are allowed)", p.ImportPath, dep)
			}
			if first, _, _ := strings.Cut(dep, "/"); strings.Contains(first, ".") && !strings.HasPrefix(dep, module+"/") {
				t.Errorf("%s depends on third-party package %s", p.ImportPath, dep)
			}
		}
	}
}

// concurrencyUses lists every goroutine, channel or select in file.
func concurrencyUses(fset *token.FileSet, file *ast.File) []string {
	var uses []string
	ast.Inspect(file, func(n ast.Node) bool {
		var what string
		switch x := n.(type) {
		case *ast.GoStmt:
			what = "a go statement"
		case *ast.ChanType:
			what = "a channel type"
		case *ast.SendStmt:
			what = "a channel send"
		case *ast.SelectStmt:
			what = "a select statement"
		case *ast.UnaryExpr:
			if x.Op == token.ARROW {
				what = "a channel receive"
			}
		}
		if what != "" {
			uses = append(uses, fset.Position(n.Pos()).String()+": "+what)
		}
		return true
	})
	return uses
}

func TestCapsuleCodeStartsNoGoroutineAndUsesNoChannel(t *testing.T) {
	for _, p := range capsulePackages(t) {
		for _, f := range p.GoFiles {
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range concurrencyUses(fset, file) {
				t.Errorf("%s (DESIGN §4: capsule code starts no goroutines and uses no channels or timers)", u)
			}
		}
	}
}

// The checker itself must catch what it looks for.
func TestRuleCheckerCatchesViolations(t *testing.T) {
	src := "package x\nfunc f() { c := make(chan int); go func() { c <- 1 }(); select {}; <-c }\n"
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	uses := strings.Join(concurrencyUses(fset, file), "\n")
	for _, want := range []string{"go statement", "channel type", "channel send", "select statement", "channel receive"} {
		if !strings.Contains(uses, want) {
			t.Errorf("checker missed %s in:\n%s", want, uses)
		}
	}
}
