package archtest

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// module is the path every package of ours starts with.
const module = "github.com/astrid-go/astrid"

// pkg is one package of the module as the checker sees it. Paths are
// relative to the module ("internal/bus"); an import outside the module
// keeps its full path ("os", "github.com/spf13/cobra").
type pkg struct {
	imports []string // direct imports of its non-test files
	deps    []string // every package it reaches (go list's Deps)
	wasip1  bool     // it builds for GOOS=wasip1
}

// graph is the module's packages by relative path.
type graph map[string]pkg

// layers is what the README's tables say: the public packages, and the
// internal table's order (a row's index; rows are listed top down).
type layers struct {
	public map[string]bool
	row    map[string]int
}

// capsuleStd is the standard library a built-in capsule may import
// directly (DESIGN §4): packages that do no I/O and start nothing. time is
// here for its values (Duration, Time); its timers are refused by
// capsules/rules_test.go.
var capsuleStd = []string{
	"bytes", "embed", "encoding/base64", "encoding/hex", "encoding/json", "errors", "fmt",
	"crypto/sha256", "math", "path", "regexp", "slices", "sort", "strconv", "strings", "time", "unicode", "unicode/utf8",
}

// nativeProviders are the built-in capsules that run natively only, each
// with the module of the official SDK it drives (DESIGN §4: the LLM
// providers' SDKs are too large for wasm and cannot dial from it). Such a
// capsule may import that SDK (and so reach what the SDK depends on) and
// the standard packages in nativeStd, which driving it takes; every other
// rule of a capsule holds for it.
var nativeProviders = map[string]string{
	"capsules/anthropic": "github.com/anthropics/anthropic-sdk-go/v2",
	"capsules/openai":    "github.com/openai/openai-go/v3",
}

var nativeStd = []string{"context", "io", "net/http", "net/url"}

// capsuleLibraries are the third-party packages (and the extra standard
// ones) a built-in capsule that still builds to wasm may import, per
// capsule: each library is pure Go, does no I/O of its own, starts
// nothing and builds for wasip1 (docs/rationale/builtin-tools.md: "Why may the http
// capsule import golang.org/x/net/html?"). The capsule's dependencies may
// reach these and nothing else third-party.
var capsuleLibraries = map[string][]string{
	"capsules/http": {"golang.org/x/net/html", "golang.org/x/net/html/atom", "net/url"},
	// The shell's deny list reads commands with a real bash parser
	// (docs/rationale/sandbox.md: "Why does the shell still have a deny list when
	// commands are confined?"); fileutil is the parser's own dependency.
	"capsules/shell": {"mvdan.cc/sh/v3/syntax", "mvdan.cc/sh/v3/fileutil"},
}

// nativeServices are the built-in capsules that serve connections natively
// (an sdk service, DESIGN §8: the uplink), with the standard packages that
// takes beyond capsuleStd; every other rule of a capsule holds for them
// (docs/rationale/daemon.md: "Why is the uplink a native service capsule?").
var nativeServices = map[string][]string{
	"capsules/uplink": {"context", "encoding/binary", "sync", "sync/atomic"},
}

// libraryOK reports whether the capsule p may import or depend on imp
// through capsuleLibraries or nativeServices.
func libraryOK(p, imp string) bool {
	return slices.Contains(capsuleLibraries[p], imp) || slices.Contains(nativeServices[p], imp)
}

// nativeImportOK reports whether the native provider p may import the
// package imp from outside the module.
func nativeImportOK(p, imp string) bool {
	sdkModule, ok := nativeProviders[p]
	return ok && (imp == sdkModule || strings.HasPrefix(imp, sdkModule+"/") || slices.Contains(nativeStd, imp))
}

var backticked = regexp.MustCompile("`([^`]+)`")

// parseLayers reads the package tables of the README's "## Packages"
// section: the first table is the public packages, the second the
// internal order, top down. A row names its packages in backticks in its
// first cell.
func parseLayers(readme string) (layers, error) {
	l := layers{public: map[string]bool{}, row: map[string]int{}}
	_, section, ok := strings.Cut(readme, "\n## Packages\n")
	if !ok {
		return l, fmt.Errorf("README has no \"## Packages\" section")
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	table, rows := 0, 0
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		if !inTable {
			inTable = true
			table++
			continue // the header row
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.Trim(cells[1], " -") == "" {
			continue // the separator row
		}
		names := backticked.FindAllStringSubmatch(cells[1], -1)
		if len(names) == 0 {
			return l, fmt.Errorf("README table row names no package: %s", line)
		}
		for _, n := range names {
			switch table {
			case 1:
				l.public[n[1]] = true
			case 2:
				l.row[n[1]] = rows
			}
		}
		if table == 2 {
			rows++
		}
	}
	if len(l.public) == 0 || len(l.row) == 0 {
		return l, fmt.Errorf("README's Packages section has %d public and %d internal entries; want two tables", len(l.public), len(l.row))
	}
	return l, nil
}

// ours reports whether an import path (relative, as in graph) is a package
// of the module: it has no dot in its first element and is in g.
func (g graph) ours(p string) bool {
	_, ok := g[p]
	return ok
}

// leaf reports whether p is a leaf helper: an internal package that imports
// nothing of ours and builds for wasip1.
func (g graph) leaf(p string) bool {
	q, ok := g[p]
	if !ok || !strings.HasPrefix(p, "internal/") || !q.wasip1 {
		return false
	}
	return !slices.ContainsFunc(q.imports, g.ours)
}

// helperOf returns the parent of a test-helper package (its last element
// ends in "test": sdk/sdktest, internal/engine/mcp/mcptest), or "".
func helperOf(p string) string {
	if dir, base := path.Split(p); dir != "" && strings.HasSuffix(base, "test") && base != "test" {
		return strings.TrimSuffix(dir, "/")
	}
	return ""
}

func isCapsule(p string) bool {
	return p == "capsules" || strings.HasPrefix(p, "capsules/") || strings.HasPrefix(p, "examples/")
}

// rowOf is p's row in the internal table: its own, or its parent's for a
// test helper.
func (l layers) rowOf(p string) (int, bool) {
	if r, ok := l.row[p]; ok {
		return r, true
	}
	if parent := helperOf(p); parent != "" {
		if r, ok := l.row[parent]; ok {
			return r, true
		}
	}
	return 0, false
}

// check returns every violation of the rules in g, one line each, sorted.
func check(g graph, l layers) []string {
	var bad []string
	report := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	for listed := range l.public {
		if !g.ours(listed) {
			report("README lists %s, which is not a package", listed)
		}
	}
	for listed := range l.row {
		if !g.ours(listed) {
			report("README lists %s, which is not a package", listed)
		}
	}
	for p, q := range g {
		_, inTable := l.rowOf(p)
		parent := helperOf(p)
		if !l.public[p] && !inTable && !l.public[parent] {
			report("%s is not in README's package tables", p)
			continue
		}
		for _, imp := range q.imports {
			if !g.ours(imp) {
				if strings.HasPrefix(p, "capsules/") && !slices.Contains(capsuleStd, imp) && !nativeImportOK(p, imp) && !libraryOK(p, imp) {
					report("%s imports %s, which is not in the built-in capsule allowlist", p, imp)
				}
				continue
			}
			if why := forbidden(g, l, p, imp); why != "" {
				report("%s imports %s: %s", p, imp, why)
			}
		}
		if strings.HasPrefix(p, "capsules/") {
			for _, dep := range q.deps {
				switch {
				case g.ours(dep) && !slices.Contains([]string{"sdk", "ipc", "hostapi"}, dep) && !g.leaf(dep):
					report("%s depends on %s (a capsule reaches only sdk, ipc, hostapi and leaf helpers)", p, dep)
				case !g.ours(dep) && strings.Contains(strings.Split(dep, "/")[0], ".") && nativeProviders[p] == "" && !libraryOK(p, dep):
					report("%s depends on third-party package %s", p, dep)
				}
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// forbidden says why p may not import imp (both ours), or "" if it may.
func forbidden(g graph, l layers, p, imp string) string {
	switch {
	case strings.HasPrefix(p, "cmd/"):
		return ""
	case p == "sdk/sdktest":
		if strings.HasPrefix(imp, "cmd/") {
			return "nothing imports a command"
		}
		return ""
	case p == "sdk":
		if imp == "hostapi" || imp == "ipc" || g.leaf(imp) {
			return ""
		}
		return "sdk imports only hostapi, ipc and leaf helpers"
	case l.public[p]:
		if imp == "ipc" || imp == "hostapi" || imp == "manifest" || g.leaf(imp) {
			return ""
		}
		return "a public package imports only ipc, hostapi, manifest and leaf helpers"
	case isCapsule(p):
		if imp == "sdk" || imp == "ipc" || imp == "hostapi" || g.leaf(imp) {
			return ""
		}
		return "a capsule imports only sdk, ipc, hostapi and leaf helpers"
	}
	// An internal package (or a test helper of one).
	switch {
	case strings.HasPrefix(imp, "cmd/"):
		return "nothing imports a command"
	case isCapsule(imp):
		return "only cmd/astrid (and sdk/sdktest) choose the built-in capsules"
	case helperOf(imp) != "" && helperOf(p) == "":
		return "test helpers are for tests"
	case l.public[imp]:
		return "" // the kernel implements and uses the public API
	case helperOf(p) == imp:
		return "" // a test helper uses what it helps test
	}
	from, _ := l.rowOf(p)
	to, listed := l.rowOf(imp)
	if !listed {
		return "it is not in README's internal table"
	}
	if to <= from {
		return fmt.Sprintf("it is listed above %s in README's internal table (a package imports only those below it)", p)
	}
	return ""
}
