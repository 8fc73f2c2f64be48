package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The documentation a newcomer reads (issue 30): docs/ARCHITECTURE.md, one
// page that fits in a head and names real files, and docs/rationale/, the
// decisions by area with an index a test keeps complete.

const (
	// root is the module's directory, seen from this package.
	root = "../.."
	// architectureDoc is the one page a newcomer reads first.
	architectureDoc = "docs/ARCHITECTURE.md"
	// rationaleDir holds the decisions, one file per area, and the index.
	rationaleDir = "docs/rationale"
	// rationaleIndex is the table of contents of rationaleDir.
	rationaleIndex = "README.md"
	// maxArchitectureWords is issue 30's bound on ARCHITECTURE.md.
	maxArchitectureWords = 2500
	// maxDecisionWords bounds one decision's body (the text under its
	// question heading).
	maxDecisionWords = 150
)

// heading is one markdown heading of a file.
type heading struct {
	level int    // 1 for "#", 2 for "##", …
	text  string // as written, without the hashes
	line  int    // 1-based
	body  string // the text up to the next heading, fenced blocks included
}

// headings reads the headings of a markdown document, skipping lines
// inside fenced code blocks.
func headings(doc string) []heading {
	var out []heading
	fenced := false
	for i, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		if !fenced {
			if n := headingLevel(l); n > 0 {
				out = append(out, heading{level: n, text: strings.TrimSpace(l[n:]), line: i + 1})
				continue
			}
		}
		if len(out) > 0 {
			out[len(out)-1].body += l + "\n"
		}
	}
	return out
}

// headingLevel is the number of leading '#' of an ATX heading line, 0 if
// the line is not one.
func headingLevel(l string) int {
	n := 0
	for n < len(l) && l[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(l) || l[n] != ' ' {
		return 0
	}
	return n
}

// slug is the anchor GitHub gives a heading: lower case, everything but
// letters, digits, '-', '_' and spaces dropped, spaces made '-'.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// areaFiles lists the area files of rationaleDir (every .md but the index).
func areaFiles(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, rationaleDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") && e.Name() != rationaleIndex {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no area file", rationaleDir)
	}
	return out
}

// questions are an area file's decisions: its "##" and "###" headings.
func questions(doc string) []heading {
	var out []heading
	for _, h := range headings(doc) {
		if h.level == 2 || h.level == 3 {
			out = append(out, h)
		}
	}
	return out
}

var (
	// indexEntry is one "- [question](file.md#anchor)" line of the index;
	// a question may hold brackets of its own ("[env]").
	indexEntry = regexp.MustCompile(`(?m)^\s*- \[(.*)\]\(([A-Za-z0-9_-]+\.md)#(\S+)\)\s*$`)
	// indexFile is a link to an area file as a whole.
	indexFile = regexp.MustCompile(`\]\(([A-Za-z0-9_-]+\.md)\)`)
)

// TestRationaleIndexIsComplete holds the table of contents to the area
// files: every question heading of every area file is listed, with its own
// text, and every entry resolves to a heading of the file it names.
func TestRationaleIndexIsComplete(t *testing.T) {
	index := readDoc(t, filepath.Join(rationaleDir, rationaleIndex))
	type entry struct{ file, anchor string }
	listed := map[entry]string{} // → link text
	files := map[string]bool{}   // area files the index links
	for _, m := range indexFile.FindAllStringSubmatch(index, -1) {
		files[m[1]] = true
	}
	entries := indexEntry.FindAllStringSubmatch(index, -1)
	for _, m := range entries {
		e := entry{m[2], m[3]}
		if _, dup := listed[e]; dup {
			t.Errorf("%s lists %s#%s twice", rationaleIndex, e.file, e.anchor)
		}
		listed[e] = m[1]
	}
	anchors := map[string]map[string]string{} // file → slug → heading
	total := 0
	for _, f := range areaFiles(t) {
		if !files[f] {
			t.Errorf("%s/%s: not linked from %s", rationaleDir, f, rationaleIndex)
		}
		anchors[f] = map[string]string{}
		qs := questions(readDoc(t, filepath.Join(rationaleDir, f)))
		if len(qs) == 0 {
			t.Errorf("%s/%s: no question heading", rationaleDir, f)
		}
		for _, q := range qs {
			total++
			s := slug(q.text)
			if prev, dup := anchors[f][s]; dup {
				t.Errorf("%s/%s:%d: %q has the anchor of %q: give it words of its own", rationaleDir, f, q.line, q.text, prev)
			}
			anchors[f][s] = q.text
			text, ok := listed[entry{f, s}]
			switch {
			case !ok:
				t.Errorf("%s/%s:%d: question %q is missing from %s (add \"- [%s](%s#%s)\")", rationaleDir, f, q.line, q.text, rationaleIndex, q.text, f, s)
			case text != q.text:
				t.Errorf("%s: the entry for %s#%s reads %q, the heading %q", rationaleIndex, f, s, text, q.text)
			}
		}
	}
	for e := range listed {
		if _, ok := anchors[e.file]; !ok {
			t.Errorf("%s: entry %s#%s names a file that is not an area file of %s", rationaleIndex, e.file, e.anchor, rationaleDir)
			continue
		}
		if _, ok := anchors[e.file][e.anchor]; !ok {
			t.Errorf("%s: entry %s#%s resolves to no heading", rationaleIndex, e.file, e.anchor)
		}
	}
	if len(entries) != total {
		t.Errorf("%s lists %d questions; the area files hold %d", rationaleIndex, len(entries), total)
	}
	// The old single file is only an index now: a question added there
	// would be outside every area and the table of contents.
	for _, h := range headings(readDoc(t, "docs/RATIONALE.md")) {
		if strings.HasSuffix(h.text, "?") {
			t.Errorf("docs/RATIONALE.md:%d: question %q belongs in an area file of %s", h.line, h.text, rationaleDir)
		}
	}
}

// TestRationaleDecisionsAreShort holds each decision to the question, the
// answer and the measured reason in at most maxDecisionWords words; longer
// measurements belong in BENCHMARKS.md.
func TestRationaleDecisionsAreShort(t *testing.T) {
	for _, f := range areaFiles(t) {
		for _, q := range questions(readDoc(t, filepath.Join(rationaleDir, f))) {
			if n := len(strings.Fields(q.body)); n > maxDecisionWords {
				t.Errorf("%s/%s:%d: %q has %d words (at most %d: move figures to BENCHMARKS.md and link them)", rationaleDir, f, q.line, q.text, n, maxDecisionWords)
			}
			if len(strings.Fields(q.body)) == 0 {
				t.Errorf("%s/%s:%d: %q has no answer", rationaleDir, f, q.line, q.text)
			}
		}
	}
}

// TestArchitectureFitsInAHead bounds ARCHITECTURE.md and holds its shape:
// the three walk-throughs and where to add things.
func TestArchitectureFitsInAHead(t *testing.T) {
	doc := readDoc(t, architectureDoc)
	if n := len(strings.Fields(doc)); n > maxArchitectureWords {
		t.Errorf("%s has %d words (at most %d)", architectureDoc, n, maxArchitectureWords)
	}
	var hs []string
	for _, h := range headings(doc) {
		hs = append(hs, h.text)
	}
	for _, want := range []string{"The layers", "Walk-through 1: a publish", "Walk-through 2: a tool call", "Walk-through 3: an agent turn", "Where to add things"} {
		if !slices.Contains(hs, want) {
			t.Errorf("%s has no section %q (sections: %q)", architectureDoc, want, hs)
		}
	}
}

var (
	// repoPath is a path of the module's tree as the document writes it
	// in running text, a code span or the diagram.
	repoPath = regexp.MustCompile("(?:^|[\\s(`\\[])((?:cmd|internal|capsules|sdk|ipc|hostapi|manifest|docs|scripts|bench|examples|testdata)/[A-Za-z0-9_./-]*)")
	// codeSpan is an inline code span.
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// goIdent is a qualified Go identifier: pkg.Name, pkg.Type.Method or
	// pkg.(*Type).Method.
	goIdent = regexp.MustCompile(`^([a-z][a-z0-9]*)\.(?:(\(\*[A-Za-z_]\w*\)|[A-Z]\w*)\.)?([A-Za-z_]\w*)$`)
	// mdLink is a relative markdown link target.
	mdLink = regexp.MustCompile(`\]\(([^)#\s:]+)(?:#[^)]*)?\)`)
)

// TestArchitectureNamesExist is the newcomer test: a reader given only
// ARCHITECTURE.md is told which files a publish, a tool call and an agent
// turn pass through, so every file path it names must exist and every Go
// identifier it names (pkg.Name, pkg.(*Type).Method) must be declared in
// that package.
func TestArchitectureNamesExist(t *testing.T) {
	doc := readDoc(t, architectureDoc)
	paths := map[string]bool{}
	for _, m := range repoPath.FindAllStringSubmatch(doc, -1) {
		paths[strings.TrimRight(m[1], ".,;:")] = true
	}
	for _, m := range mdLink.FindAllStringSubmatch(doc, -1) {
		paths[filepath.ToSlash(filepath.Join("docs", m[1]))] = true
	}
	for p := range paths {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s names %s, which does not exist", architectureDoc, p)
		}
	}
	decls := declarations(t)
	idents := 0
	for _, m := range codeSpan.FindAllStringSubmatch(doc, -1) {
		id := goIdent.FindStringSubmatch(m[1])
		if id == nil || strings.HasSuffix(m[1], ".go") || strings.HasSuffix(m[1], ".md") {
			continue
		}
		pkg, names := id[1], decls[id[1]]
		if names == nil {
			continue // not a package of ours (os.Root, a topic)
		}
		idents++
		name := id[3]
		if id[2] != "" {
			name = id[2] + "." + id[3]
		}
		if !names[name] {
			t.Errorf("%s names %s, which package %s does not declare", architectureDoc, m[1], pkg)
		}
	}
	t.Logf("%s: checked %d paths and %d identifiers", architectureDoc, len(paths), idents)
	// A checker that matches nothing passes anything.
	if len(paths) < 30 || idents < 15 {
		t.Errorf("checked %d paths and %d identifiers of %s: the patterns no longer match what it writes", len(paths), idents, architectureDoc)
	}
}

// declarations maps each package name of the module to what its non-test
// files declare at top level: "Name" for functions, types, variables and
// constants, "Type.Method" and "(*Type).Method" for methods (a value
// method is in the pointer's method set too).
func declarations(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules" || n == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := out[f.Name.Name]
		if names == nil {
			names = map[string]bool{}
			out[f.Name.Name] = names
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					names[d.Name.Name] = true
					continue
				}
				typ, ptr := receiver(d.Recv.List[0].Type)
				names["(*"+typ+")."+d.Name.Name] = true
				if !ptr {
					names[typ+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// receiver names a method's receiver type and whether it is a pointer.
func receiver(e ast.Expr) (string, bool) {
	ptr := false
	if s, ok := e.(*ast.StarExpr); ok {
		e, ptr = s.X, true
	}
	switch x := e.(type) {
	case *ast.IndexExpr: // a generic type, T[P]
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name, ptr
	}
	return "", ptr
}
