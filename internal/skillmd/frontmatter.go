package skillmd

import (
	"strings"
)

// Frontmatter is what a SKILL.md says of itself (the Agent Skills
// layout): name and description between "---" lines at the top.
type Frontmatter struct {
	Name        string
	Description string
}

// maxFrontmatterLines bounds the lines read as frontmatter.
const maxFrontmatterLines = 100

// ParseFrontmatter reads the frontmatter at the top of text: "---", lines
// "key: value" (a value may be quoted; other keys and nested lines are
// skipped), "---". ok is false when text has none (no opening "---", or
// no closing one within maxFrontmatterLines lines); body is the text
// after it (all of text when there is none).
func ParseFrontmatter(text string) (fm Frontmatter, body string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimPrefix(text, "\ufeff"), "---")
	if !found {
		return fm, text, false
	}
	first, rest, found := strings.Cut(rest, "\n")
	if !found || strings.TrimSpace(first) != "" {
		return fm, text, false
	}
	for i := 0; i < maxFrontmatterLines; i++ {
		line, after, more := strings.Cut(rest, "\n")
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "---" {
			return fm, after, true
		}
		if !more {
			break
		}
		rest = after
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue // nested or blank: not name or description
		}
		key, value, isPair := strings.Cut(line, ":")
		if !isPair {
			continue
		}
		value = unquote(strings.TrimSpace(value))
		switch strings.TrimSpace(key) {
		case "name":
			fm.Name = value
		case "description":
			fm.Description = value
		}
	}
	return Frontmatter{}, text, false
}

// unquote strips one pair of matching quotes.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// MaxBytes is the largest SKILL.md offered (the static engine's bound on
// one file, so every source agrees).
const MaxBytes = 256 << 10
