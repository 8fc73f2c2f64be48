package capsulepack

import (
	"fmt"
	"path"
	"strings"
)

// selection decides which files of a capsule directory are packed, from
// [package] include and exclude (seed 003): with no include, every file
// but hidden ones, Go sources and earlier archives (the built component
// ships, its source does not); with include, only what it matches. The
// manifest, meta.json and the components are always packed, and may not
// be excluded.
type selection struct {
	include, exclude []string
	always           map[string]bool
}

func newSelection(include, exclude []string, always map[string]bool) (*selection, error) {
	for _, list := range [][]string{include, exclude} {
		for _, p := range list {
			if _, err := path.Match(cleanPattern(p), ""); err != nil {
				return nil, fmt.Errorf("[package] pattern %q: %w", p, err)
			}
		}
	}
	return &selection{include: include, exclude: exclude, always: always}, nil
}

// wants reports whether the file at slash path rel is packed; an always
// packed file that exclude matches is an error.
func (s *selection) wants(rel string) (bool, error) {
	if s.always[rel] {
		for _, p := range s.exclude {
			if matches(p, rel) {
				return false, fmt.Errorf("[package] exclude %q matches %s, which the capsule needs to load; narrow the pattern", p, rel)
			}
		}
		return true, nil
	}
	in := false
	if len(s.include) == 0 {
		in = !defaultSkipped(rel)
	}
	for _, p := range s.include {
		if matches(p, rel) {
			in = true
			break
		}
	}
	if !in {
		return false, nil
	}
	for _, p := range s.exclude {
		if matches(p, rel) {
			return false, nil
		}
	}
	return true, nil
}

// defaultSkipped is what is left out without an include list.
func defaultSkipped(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	base := path.Base(rel)
	switch {
	case strings.HasSuffix(base, ".go"), base == "go.mod", base == "go.sum", strings.HasPrefix(base, "go.work"),
		strings.HasSuffix(base, Ext):
		return true
	}
	return false
}

func cleanPattern(p string) string {
	return strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
}

// matches is gitignore-like: a pattern matches the path or any directory
// above it ("docs" takes docs/a.md), and a pattern without a slash also
// matches any single name in the path ("*.md" takes docs/a.md).
func matches(pattern, rel string) bool {
	p := cleanPattern(pattern)
	segs := strings.Split(rel, "/")
	for i := range segs {
		if ok, _ := path.Match(p, strings.Join(segs[:i+1], "/")); ok {
			return true
		}
		if !strings.Contains(p, "/") {
			if ok, _ := path.Match(p, segs[i]); ok {
				return true
			}
		}
	}
	return false
}
