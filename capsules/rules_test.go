package capsules

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/astrid-go/astrid"

// What a capsule may import is held with the rest of the module's layering
// by internal/archtest (DESIGN §3); this file holds what only capsules
// promise: no goroutines, channels or selects.

type goPackage struct {
	ImportPath string
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
		case *ast.SelectorExpr:
			// The time package is allowed for its values (a Duration to
			// pass to Recv, a Time from Now), never for its timers: a
			// handler waits only in host calls (Recv), which the kernel
			// bounds and accounts for.
			if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "time" && timerFuncs[x.Sel.Name] {
				what = "a timer (time." + x.Sel.Name + ")"
			}
		}
		if what != "" {
			uses = append(uses, fset.Position(n.Pos()).String()+": "+what)
		}
		return true
	})
	return uses
}

// timerFuncs are the time package's functions that sleep or start a timer.
var timerFuncs = map[string]bool{"Sleep": true, "After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}

// nativeServices serve connections natively (an sdk service, DESIGN §8):
// they start goroutines and use channels, and so never build to wasm
// (internal/archtest holds what they may import).
var nativeServices = map[string]bool{module + "/capsules/uplink": true}

func TestCapsuleCodeStartsNoGoroutineAndUsesNoChannel(t *testing.T) {
	for _, p := range capsulePackages(t) {
		if nativeServices[p.ImportPath] {
			continue
		}
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
	src := "package x\nimport \"time\"\nfunc f() { c := make(chan int); go func() { c <- 1 }(); select {}; <-c; time.Sleep(1); time.AfterFunc(1, nil); _ = time.Millisecond }\n"
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	uses := strings.Join(concurrencyUses(fset, file), "\n")
	if strings.Contains(uses, "time.Millisecond") {
		t.Errorf("checker flags a time value as a timer:\n%s", uses)
	}
	for _, want := range []string{"go statement", "channel type", "channel send", "select statement", "channel receive", "time.Sleep", "time.AfterFunc"} {
		if !strings.Contains(uses, want) {
			t.Errorf("checker missed %s in:\n%s", want, uses)
		}
	}
}
