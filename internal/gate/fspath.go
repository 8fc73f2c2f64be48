package gate

import (
	"strings"
	"unicode/utf8"
)

// maxPathBytes is Linux's PATH_MAX; anything longer cannot be opened anyway,
// and the bound keeps a hostile path's cost small.
const maxPathBytes = 4096

// oddity names what makes s unfit to be a path, or returns "". Backslashes
// are refused because they are separators on Windows and read as traversal
// (`..\x`) to any tool that converts them; control characters (NUL first)
// truncate or forge paths in C APIs and log lines; requests reach us as JSON
// strings, so refusing invalid UTF-8 costs a capsule nothing.
func oddity(s string) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > maxPathBytes:
		return "is longer than 4096 bytes"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.ContainsRune(s, 0):
		return "contains a NUL byte"
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "contains a control character"
	case strings.Contains(s, `\`):
		return "contains a backslash"
	}
	return ""
}

// relClean checks a slash-separated relative path and returns it without its
// one permitted trailing slash. It refuses instead of cleaning: "..", "." and
// empty components are errors, because a path that needs cleaning is one
// whose meaning the capsule and the gate could disagree about. ".." is looked
// for first so that traversal is reported as such.
func relClean(rel string) (string, string) {
	if rel == "" {
		return "", ""
	}
	if trimmed, ok := strings.CutSuffix(rel, "/"); ok {
		if trimmed == "" || strings.HasSuffix(trimmed, "/") {
			return "", "has an empty component"
		}
		rel = trimmed
	}
	segments := strings.Split(rel, "/")
	for _, seg := range segments {
		if seg == ".." {
			return "", `has a ".." component`
		}
	}
	for _, seg := range segments {
		switch seg {
		case "":
			return "", "has an empty component"
		case ".":
			return "", `has a "." component`
		}
	}
	return rel, ""
}

// join appends a clean relative path to an absolute directory.
func join(dir, rel string) string {
	switch {
	case rel == "":
		return dir
	case dir == "/":
		return "/" + rel
	}
	return dir + "/" + rel
}

// within reports whether the clean absolute path p is dir or below it, by
// whole components (/workspace does not cover /workspace-evil), and returns
// p relative to dir ("." for dir itself).
func within(p, dir string) (string, bool) {
	switch {
	case p == dir:
		return ".", true
	case dir == "/":
		return p[1:], true
	case strings.HasPrefix(p, dir) && p[len(dir)] == '/':
		return p[len(dir)+1:], true
	}
	return "", false
}

// splitScheme splits `scheme://rest`. Anything holding "://" is taken as a
// scheme form, so a relative path cannot smuggle one in further along.
func splitScheme(s string) (scheme, rest string, ok bool) {
	return strings.Cut(s, "://")
}
