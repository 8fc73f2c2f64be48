package skillmd_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/astrid-go/astrid/internal/skillmd"
)

func TestParseFrontmatter(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		want       skillmd.Frontmatter
		ok         bool
		bodyPrefix string
	}{
		{"plain", "---\nname: review\ndescription: Review a change\n---\n# Body", skillmd.Frontmatter{Name: "review", Description: "Review a change"}, true, "# Body"},
		{"quoted, CRLF, BOM", "\ufeff---\r\nname: 'lint'\r\ndescription: \"Run: the linters\"\r\n---\r\nbody", skillmd.Frontmatter{Name: "lint", Description: "Run: the linters"}, true, "body"},
		{"nested keys skipped", "---\nname: a\nmetadata:\n  name: not-this\n  description: nor-this\n---\n", skillmd.Frontmatter{Name: "a"}, true, ""},
		{"no frontmatter", "# Just text\nname: x\n", skillmd.Frontmatter{}, false, "# Just text"},
		{"never closed", "---\nname: a\ndescription: b\n", skillmd.Frontmatter{}, false, "---"},
		{"dashes then text", "--- name: a\n---\n", skillmd.Frontmatter{}, false, "---"},
		{"empty", "", skillmd.Frontmatter{}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, body, ok := skillmd.ParseFrontmatter(tc.in)
			if fm != tc.want || ok != tc.ok || !strings.HasPrefix(body, tc.bodyPrefix) {
				t.Fatalf("got %+v %v %q; want %+v %v, body starting %q", fm, ok, body, tc.want, tc.ok, tc.bodyPrefix)
			}
		})
	}
}

// FuzzParseFrontmatter: a SKILL.md is text from a workspace or an
// installed capsule. Whatever it holds, the parser ends, and what it
// returns is a part of its input.
func FuzzParseFrontmatter(f *testing.F) {
	f.Add("---\nname: review\ndescription: Review a change\n---\n# Body")
	f.Add("---\r\nname: 'x'\r\n---")
	f.Add("---\n" + strings.Repeat("k: v\n", 200))
	f.Fuzz(func(t *testing.T, in string) {
		fm, body, ok := skillmd.ParseFrontmatter(in)
		if !strings.Contains(in, body) || !ok && (fm != skillmd.Frontmatter{}) {
			t.Fatalf("ParseFrontmatter(%q) = %+v, %q, %v", in, fm, body, ok)
		}
		if utf8.ValidString(in) && (!utf8.ValidString(fm.Name) || !utf8.ValidString(fm.Description)) {
			t.Fatalf("invalid UTF-8 out of valid input: %+v", fm)
		}
	})
}
