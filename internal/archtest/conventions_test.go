package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The kernel knows no convention of the agent stack (DESIGN §4b, issue 30
// item 1): nothing in the kernel, dispatch, the bus and its transports, the
// runtime or the host names a topic of the tool, model, prompt, session or
// registry conventions, by a string or through an ipc identifier that
// stands for one. Request/reply is an envelope's business, so the kernel
// answers a failed request without knowing what its topic means.
// Frontends, capsules, sdk and the MCP engine (which turns a server into
// tools) may name them.

// agentStackPrefixes begin the topics of the agent stack's conventions.
var agentStackPrefixes = []string{"tool.", "llm.", "prompt_builder.", "session.", "registry.", "resource.", "prompt.", "completion."}

// kernelRoots are the directory trees whose non-test Go files are the
// kernel; a package added under one (the host's split) is covered.
var kernelRoots = []string{"internal/kernel", "internal/runtime", "internal/dispatch", "internal/bus", "internal/host"}

// notKernel are directories under kernelRoots that are no part of it.
var notKernel = map[string]string{
	// Imported by tests alone: it builds NATS servers in operator mode
	// for them, and a fixture may name whatever topic it tests.
	"internal/bus/natsbus/natsbustest": "test support",
}

// conventionFiles are the ipc files that declare the agent stack's
// conventions: every exported identifier they declare stands for one (a
// topic, a tool's or model's payload, a convention's parsing). A file
// missing is skipped: identifiers elsewhere that name a topic are found by
// their strings (conventionIdents).
var conventionFiles = []string{
	"ipc/tool_topics.go", "ipc/tool_payloads.go", "ipc/tool_codec.go", "ipc/tool_describe.go", "ipc/tool_name.go",
	"ipc/llm.go", "ipc/llm_stream.go", "ipc/llm_stream_codec.go", "ipc/payload_llm.go",
	"ipc/registry.go", "ipc/reply_topic.go", "ipc/resource.go", "ipc/resource_uri.go", "ipc/prompt.go", "ipc/completion.go",
}

// conventionAllowlist are the kernel files that still name an agent-stack
// topic, each with why, until the work named removes it. The list only
// shrinks: a file listed that no longer names one fails the test, so that
// it is taken off.
var conventionAllowlist = map[string]string{}

// namesAgentStack reports whether s, a string literal's value, is an
// agent-stack topic (or the start of one).
func namesAgentStack(s string) bool {
	return slices.ContainsFunc(agentStackPrefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// conventionIdents is the exported identifiers of package ipc that stand
// for an agent-stack convention: those declared in conventionFiles, and
// any other constant, variable or function whose declaration holds an
// agent-stack topic's string or names a constant or variable that does
// (ipc.LLMStreamTopic builds one; ipc.ToolNameFromExecuteTopic parses one
// through an unexported prefix).
func conventionIdents(t *testing.T) map[string]bool {
	t.Helper()
	dir := filepath.Join(root, "ipc")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type decl struct {
		names    []string
		value    bool // a constant or variable, not a function or type
		literal  bool // holds an agent-stack string
		mentions map[string]bool
	}
	var decls []decl
	out := map[string]bool{}
	fset := token.NewFileSet()
	conventionFound := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		inConvention := slices.Contains(conventionFiles, "ipc/"+name)
		if inConvention {
			conventionFound++
		}
		add := func(node ast.Node, value bool, names ...string) {
			d := decl{names: names, value: value, mentions: map[string]bool{}}
			ast.Inspect(node, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if s, ok := stringValue(n); ok && namesAgentStack(s) {
						d.literal = true
					}
				case *ast.Ident:
					d.mentions[n.Name] = true
				}
				return true
			})
			decls = append(decls, d)
			if inConvention {
				for _, n := range names {
					if ast.IsExported(n) {
						out[n] = true
					}
				}
			}
		}
		for _, dl := range f.Decls {
			switch dl := dl.(type) {
			case *ast.FuncDecl:
				if dl.Recv == nil {
					add(dl, false, dl.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range dl.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s, false, s.Name.Name)
					case *ast.ValueSpec:
						names := make([]string, len(s.Names))
						for i, n := range s.Names {
							names[i] = n.Name
						}
						add(s, true, names...)
					}
				}
			}
		}
	}
	if conventionFound < 4 {
		t.Fatalf("found %d of the convention files %v in ipc: the list no longer matches the package", conventionFound, conventionFiles)
	}
	// Constants and variables holding a topic's string, then whatever
	// mentions one of them.
	topical := map[string]bool{}
	for _, d := range decls {
		if d.value && d.literal {
			for _, n := range d.names {
				topical[n] = true
			}
		}
	}
	for _, d := range decls {
		if d.literal || mentionsAny(d.mentions, topical) {
			for _, n := range d.names {
				if ast.IsExported(n) {
					out[n] = true
				}
			}
		}
	}
	return out
}

func mentionsAny(mentions, names map[string]bool) bool {
	for n := range mentions {
		if names[n] {
			return true
		}
	}
	return false
}

// stringValue is a string literal's value.
func stringValue(l *ast.BasicLit) (string, bool) {
	if l.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(l.Value)
	return s, err == nil
}

// conventionHit is one place a file names an agent-stack topic.
type conventionHit struct {
	line int
	what string
}

// conventionHits lists where the Go source src names an agent-stack topic:
// a string literal starting with one (import paths aside), or a reference
// to one of idents through package ipc, whatever it is imported as.
func conventionHits(fset *token.FileSet, path string, src any, idents map[string]bool) ([]conventionHit, error) {
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	ipcNames := map[string]bool{}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/ipc" {
			n := "ipc"
			if imp.Name != nil {
				n = imp.Name.Name
			}
			ipcNames[n] = true
		}
	}
	var hits []conventionHit
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.BasicLit:
			if s, ok := stringValue(n); ok && namesAgentStack(s) {
				hits = append(hits, conventionHit{fset.Position(n.Pos()).Line, strconv.Quote(s)})
			}
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && ipcNames[x.Name] && idents[n.Sel.Name] {
				hits = append(hits, conventionHit{fset.Position(n.Pos()).Line, x.Name + "." + n.Sel.Name})
			}
		}
		return true
	})
	return hits, nil
}

// kernelFiles is the non-test Go files of the kernel, relative to the
// module's root, slash-separated.
func kernelFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, r := range kernelRoots {
		err := filepath.WalkDir(filepath.Join(root, r), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if _, skip := notKernel[rel]; skip || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestTheKernelNamesNoAgentStackTopic is issue 30's architecture test: it
// fails when a kernel file names an agent-stack topic and is not
// allowlisted, and when an allowlisted file no longer does (or is gone).
func TestTheKernelNamesNoAgentStackTopic(t *testing.T) {
	idents := conventionIdents(t)
	for _, want := range []string{"ToolResultTopic", "ToolNameFromExecuteTopic", "LLMStreamTopic", "ToolDescribeResponseTopic", "ParseToolDescribeResponse", "ToolRequestCancelTopic", "SessionResponseTopic", "RegistryResponseTopic"} {
		if !idents[want] {
			t.Errorf("ipc.%s is not taken as naming an agent-stack convention", want)
		}
	}
	for _, clean := range []string{"ValidateTopic", "Envelope", "MatchInterceptor", "KernelSourceID", "RequestFailed", "FailHostLost", "CapsulesLoadedTopic", "ApprovalRequestTopic"} {
		if idents[clean] {
			t.Errorf("ipc.%s is taken as naming an agent-stack convention; it is the kernel's own", clean)
		}
	}
	t.Logf("%d ipc identifiers stand for a convention: %v", len(idents), slices.Sorted(maps.Keys(idents)))
	files := kernelFiles(t)
	if len(files) < 50 {
		t.Fatalf("found %d kernel files under %v: the walk no longer matches the tree", len(files), kernelRoots)
	}
	fset := token.NewFileSet()
	naming := map[string]bool{}
	for _, f := range files {
		hits, err := conventionHits(fset, filepath.Join(root, f), nil, idents)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			continue
		}
		naming[f] = true
		if _, ok := conventionAllowlist[f]; ok {
			continue
		}
		var where []string
		for _, h := range hits {
			where = append(where, fmt.Sprintf("%s:%d: %s", f, h.line, h.what))
		}
		t.Errorf("%s names the agent stack's conventions, which the kernel must not know (DESIGN §4b); "+
			"make it generic (a request's reply address, a capsule's own manifest) or move it into a capsule:\n\t%s",
			f, strings.Join(where, "\n\t"))
	}
	for f := range conventionAllowlist {
		if !naming[f] {
			t.Errorf("%s is allowlisted but names no agent-stack topic any more: take it off conventionAllowlist", f)
		}
	}
}

// TestTheConventionCheckerCatches: the checker finds a topic's string, an
// ipc identifier under another import name, and nothing in clean code.
func TestTheConventionCheckerCatches(t *testing.T) {
	idents := map[string]bool{"ToolResultTopic": true}
	src := `package x

import (
	"fmt"

	wire "github.com/astrid-go/astrid/ipc"
)

func f() {
	_ = "llm.v1.stream." + "p"
	_ = wire.ToolResultTopic("echo")
	_ = wire.ValidateTopic("a.b")
	_ = "astrid.v1.capsules_loaded"
	fmt.Println("the tool. ran")
}
`
	hits, err := conventionHits(token.NewFileSet(), "x.go", src, idents)
	if err != nil {
		t.Fatal(err)
	}
	want := []conventionHit{{10, `"llm.v1.stream."`}, {11, "wire.ToolResultTopic"}}
	if !slices.Equal(hits, want) {
		t.Fatalf("hits %v, want %v", hits, want)
	}
}
