package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// goList runs `go list -e -json` over the module's packages with env
// added, returning each package by relative path.
func goList(t *testing.T, env ...string) map[string]listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps,GoFiles,Error,DepsErrors", "./...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[rel(p.ImportPath)] = p
	}
	return pkgs
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
	GoFiles    []string
	Error      *struct{ Err string }
	DepsErrors []*struct{ Err string }
}

func rel(importPath string) string {
	if importPath == module {
		return "."
	}
	return strings.TrimPrefix(importPath, module+"/")
}

func rels(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = rel(p)
	}
	return out
}

// moduleGraph is the module as go list sees it natively, each package
// marked with whether it builds for wasip1.
func moduleGraph(t *testing.T) graph {
	t.Helper()
	native := goList(t)
	wasi := goList(t, "GOOS=wasip1", "GOARCH=wasm")
	g := graph{}
	for p, n := range native {
		if n.Error != nil {
			t.Fatalf("go list %s: %s", p, n.Error.Err)
		}
		w, ok := wasi[p]
		g[p] = pkg{
			imports: rels(n.Imports),
			deps:    rels(n.Deps),
			wasip1:  ok && w.Error == nil && len(w.DepsErrors) == 0 && len(w.GoFiles) > 0,
		}
	}
	return g
}

func readmeLayers(t *testing.T) layers {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	l, err := parseLayers(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The code keeps the README's layering and DESIGN §3's rules, and the
// README lists exactly the packages that exist.
func TestTheModuleKeepsItsLayers(t *testing.T) {
	g := moduleGraph(t)
	if len(g) < 20 {
		t.Fatalf("go list found %d packages; the checker would check next to nothing", len(g))
	}
	for _, v := range check(g, readmeLayers(t)) {
		t.Error(v)
	}
}

// syntheticLayers is a small README in the real one's shape.
const syntheticREADME = "# x\n\n## Packages\n\nPublic:\n\n| package | owns |\n|---|---|\n" +
	"| `ipc` | wire |\n| `hostapi` | syscalls |\n| `manifest` | manifests |\n| `sdk` | capsule API; `sdk/sdktest` |\n\n" +
	"Internal:\n\n| package | owns |\n|---|---|\n" +
	"| `cmd/astrid` | binary |\n| `internal/kernel` | boot |\n| `internal/bus` | routes |\n" +
	"| `internal/jsonscan` | a leaf helper |\n| `internal/netonly` | leaf-shaped, but not for wasip1 |\n" +
	"| `capsules/fs` | a capsule |\n| `capsules/anthropic` | a native provider |\n| `capsules/openai` | a native provider |\n| `capsules/http` | a capsule with a library |\n\n## Next\n\n| `ignored` | after the section |\n"

// syntheticGraph is a module that keeps every rule; each case below adds
// one edge or package to it.
func syntheticGraph() graph {
	return graph{
		"ipc":                  {imports: []string{"internal/jsonscan", "encoding/json"}, wasip1: true},
		"hostapi":              {wasip1: true},
		"manifest":             {imports: []string{"ipc"}, wasip1: true},
		"sdk":                  {imports: []string{"hostapi", "ipc"}, wasip1: true},
		"sdk/sdktest":          {imports: []string{"internal/kernel", "capsules/fs", "sdk"}},
		"cmd/astrid":           {imports: []string{"internal/kernel", "capsules/fs"}},
		"internal/kernel":      {imports: []string{"internal/bus", "ipc", "manifest"}},
		"internal/bus":         {imports: []string{"internal/jsonscan", "ipc"}},
		"internal/jsonscan":    {imports: []string{"unicode/utf8"}, wasip1: true},
		"internal/netonly":     {imports: []string{"net"}},
		"internal/bus/bustest": {imports: []string{"internal/bus"}},
		"capsules/fs": {imports: []string{"sdk", "hostapi", "strings"}, deps: []string{"sdk", "hostapi", "ipc", "strings"},
			wasip1: true},
		// A capsule with an allowlisted library reaches it (and net/url).
		"capsules/http": {imports: []string{"sdk", "net/url", "golang.org/x/net/html"},
			deps: []string{"sdk", "ipc", "net/url", "golang.org/x/net/html", "golang.org/x/net/html/atom"}, wasip1: true},
		// A native provider reaches its SDK and what the SDK depends on.
		"capsules/anthropic": {imports: []string{"sdk", "net/http", "github.com/anthropics/anthropic-sdk-go/v2/option"},
			deps: []string{"sdk", "ipc", "net/http", "github.com/anthropics/anthropic-sdk-go/v2/option", "github.com/tidwall/gjson"}},
		"capsules/openai": {imports: []string{"sdk", "ipc", "net/http", "github.com/openai/openai-go/v3", "github.com/openai/openai-go/v3/option"},
			deps: []string{"sdk", "ipc", "hostapi", "net/http", "github.com/openai/openai-go/v3", "github.com/tidwall/gjson"}},
	}
}

// The checker reports each kind of forbidden edge, and only it.
func TestTheCheckerCatchesForbiddenImports(t *testing.T) {
	l, err := parseLayers(syntheticREADME)
	if err != nil {
		t.Fatal(err)
	}
	if v := check(syntheticGraph(), l); len(v) != 0 {
		t.Fatalf("the clean synthetic module has violations: %q", v)
	}
	add := func(from string, imports ...string) func(graph) {
		return func(g graph) {
			p := g[from]
			p.imports = append(p.imports, imports...)
			p.deps = append(p.deps, imports...)
			g[from] = p
		}
	}
	for _, c := range []struct {
		name   string
		change func(graph)
		want   string // a substring of the first violation expected
		n      int    // violations expected, when not 1
	}{
		{"an internal package imports one listed above it", add("internal/bus", "internal/kernel"),
			"internal/bus imports internal/kernel: it is listed above", 0},
		{"a leaf helper stops being one when it imports ours", add("internal/jsonscan", "internal/netonly"),
			"ipc imports internal/jsonscan: a public package imports only", 0},
		{"the kernel imports a built-in capsule", add("internal/kernel", "capsules/fs"),
			"only cmd/astrid (and sdk/sdktest) choose the built-in capsules", 0},
		{"a public package imports the kernel", add("ipc", "internal/kernel"),
			"a public package imports only ipc, hostapi, manifest and leaf helpers", 0},
		{"a public package imports an internal package that does not build for wasip1", add("hostapi", "internal/netonly"),
			"hostapi imports internal/netonly", 0},
		{"a public package imports sdk", add("manifest", "sdk"),
			"manifest imports sdk", 0},
		{"sdk imports manifest", add("sdk", "manifest"),
			"sdk imports only hostapi, ipc and leaf helpers", 0},
		{"a capsule imports the bus (and so depends on it)", add("capsules/fs", "internal/bus"),
			"capsules/fs depends on internal/bus", 2},
		{"a capsule imports os", add("capsules/fs", "os"),
			"capsules/fs imports os, which is not in the built-in capsule allowlist", 0},
		{"a capsule reaches a third-party package", func(g graph) {
			p := g["capsules/fs"]
			p.deps = append(p.deps, "github.com/pelletier/go-toml/v2")
			g["capsules/fs"] = p
		}, "capsules/fs depends on third-party package github.com/pelletier/go-toml/v2", 0},
		{"a capsule imports another capsule's library", add("capsules/fs", "golang.org/x/net/html"),
			"capsules/fs depends on third-party package golang.org/x/net/html", 2},
		{"a capsule with a library imports another third-party package", add("capsules/http", "golang.org/x/net/http2"),
			"capsules/http depends on third-party package golang.org/x/net/http2", 2},
		{"a capsule with a library imports os", add("capsules/http", "os"),
			"capsules/http imports os, which is not in the built-in capsule allowlist", 0},
		{"a native provider imports a third-party package other than its SDK", func(g graph) {
			p := g["capsules/anthropic"]
			p.imports = append(p.imports, "github.com/spf13/cobra")
			g["capsules/anthropic"] = p
		}, "capsules/anthropic imports github.com/spf13/cobra, which is not in the built-in capsule allowlist", 0},
		{"a native provider imports os", func(g graph) {
			p := g["capsules/anthropic"]
			p.imports = append(p.imports, "os")
			g["capsules/anthropic"] = p
		}, "capsules/anthropic imports os", 0},
		{"a native provider imports a third-party package other than its SDK", add("capsules/openai", "github.com/pelletier/go-toml/v2"),
			"capsules/openai imports github.com/pelletier/go-toml/v2, which is not in the built-in capsule allowlist", 0},
		{"a native provider reaches the bus", add("capsules/openai", "internal/bus"),
			"capsules/openai depends on internal/bus", 2},
		{"a product package imports a test helper", add("internal/kernel", "internal/bus/bustest"),
			"test helpers are for tests", 0},
		{"a package the README lacks", func(g graph) { g["internal/newthing"] = pkg{} },
			"internal/newthing is not in README's package tables", 0},
		{"a package the README lists that does not exist", func(g graph) { delete(g, "internal/netonly") },
			"README lists internal/netonly, which is not a package", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := syntheticGraph()
			c.change(g)
			v := check(g, l)
			n := max(c.n, 1)
			if len(v) != n || !strings.Contains(v[0], c.want) {
				t.Fatalf("violations %q; want %d, the first containing %q", v, n, c.want)
			}
		})
	}
}

// The README's tables are read as the checker needs them.
func TestTheREADMETablesParse(t *testing.T) {
	l, err := parseLayers(syntheticREADME)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(len(l.public), l.row["cmd/astrid"], l.row["internal/bus"], l.row["capsules/fs"]); got != "4 0 2 5" {
		t.Errorf("public count and rows = %s, want 4 0 2 5", got)
	}
	if _, ok := l.row["ignored"]; ok {
		t.Error("a table after the Packages section was read")
	}
	if _, err := parseLayers("# no packages section\n"); err == nil {
		t.Error("a README without the section parsed")
	}
}
