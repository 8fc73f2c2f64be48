package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// featuresDoc is the feature table: each row names the tests that prove
// it (issue 36: "the feature table rows … move to ✔, the audit's evidence
// re-run").
const featuresDoc = "docs/features.md"

var (
	evidenceName = regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)`")
	testDecl     = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)\(`)
)

// TestFeatureEvidenceExists: every test the feature table names is
// declared in a _test.go file of the module, so a row cannot go on
// claiming what a renamed or deleted test no longer proves; and every ✔
// row names at least one.
func TestFeatureEvidenceExists(t *testing.T) {
	doc := readDoc(t, featuresDoc)
	declared := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range testDecl.FindAllSubmatch(b, -1) {
			declared[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for i, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| #") || strings.HasPrefix(line, "| ---") {
			continue
		}
		names := evidenceName.FindAllStringSubmatch(line, -1)
		if strings.Contains(line, "| ✔ |") && len(names) == 0 {
			t.Errorf("%s:%d: a ✔ row names no test", featuresDoc, i+1)
		}
		for _, m := range names {
			named++
			if !declared[m[1]] {
				t.Errorf("%s:%d names %s, which no test file declares", featuresDoc, i+1, m[1])
			}
		}
	}
	// A checker that matches nothing passes anything.
	if named < 40 || len(declared) < 500 {
		t.Errorf("checked %d names against %d declared tests: the patterns no longer match", named, len(declared))
	}
}
