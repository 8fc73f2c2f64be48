package ipc

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxResourceURI is the longest resource URI the resource convention
// carries (docs/mcp.md).
const MaxResourceURI = 2048

// CheckResourceURI refuses a resource URI before any capsule sees it:
// empty or longer than MaxResourceURI, not UTF-8, holding a control
// character or a space, without a scheme, not a URI, or with a ".." path
// segment (also when percent-encoded or written with '\'), which a capsule
// that maps URIs onto files could be led out of its directory by.
func CheckResourceURI(uri string) error {
	switch {
	case uri == "":
		return fmt.Errorf("the resource URI is empty")
	case len(uri) > MaxResourceURI:
		return fmt.Errorf("the resource URI is %d bytes; the longest served is %d", len(uri), MaxResourceURI)
	case !utf8.ValidString(uri):
		return fmt.Errorf("the resource URI is not UTF-8")
	}
	for _, r := range uri {
		if r <= ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("the resource URI holds a control character or a space (%U)", r)
		}
	}
	u, err := url.Parse(uri)
	if err != nil {
		return fmt.Errorf("the resource URI is not a URI: %w", err)
	}
	if u.Scheme == "" {
		return fmt.Errorf("the resource URI %q has no scheme (want scheme:..., as in file:///x or test://y)", clipURI(uri))
	}
	return traversal(uri)
}

// separators split a URI into the segments traversal looks at: a path's,
// and a query's names and values.
const separators = `/\?#:&=;`

// traversal refuses a uri with a ".." segment (split at separators), as
// written and once its percent-encoding (applied again and again, up to
// four times) is undone.
func traversal(uri string) error {
	s := uri
	for range 4 {
		for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(separators, r) }) {
			if seg == ".." {
				return fmt.Errorf("the resource URI %q has a \"..\" path segment", clipURI(uri))
			}
		}
		d, err := url.PathUnescape(s)
		if err != nil {
			return fmt.Errorf("the resource URI %q has a malformed percent-encoding: %w", clipURI(uri), err)
		}
		if d == s {
			return nil
		}
		s = d
	}
	return fmt.Errorf("the resource URI %q is percent-encoded more than four times over", clipURI(uri))
}

// CheckOwnResourceURI checks a URI a capsule describes as its own:
// CheckResourceURI's rules, and not the astrid: scheme, which names the
// capsules' declared files (so that no capsule serves another's skill).
func CheckOwnResourceURI(uri string) error {
	if err := CheckResourceURI(uri); err != nil {
		return err
	}
	if scheme, _, _ := strings.Cut(uri, ":"); strings.EqualFold(scheme, "astrid") {
		return fmt.Errorf("the astrid: scheme is the declared files' (astrid://<capsule>/skills/<name>); a capsule may not describe a resource in it")
	}
	return nil
}

// CheckResourceTemplate checks a capsule's URI template before its RFC
// 6570 syntax is parsed: at most MaxResourceURI bytes, a scheme before its
// first variable, and literal text (each expression filled) that
// CheckOwnResourceURI accepts.
func CheckResourceTemplate(raw string) error {
	if len(raw) > MaxResourceURI {
		return fmt.Errorf("the URI template is %d bytes; the longest served is %d", len(raw), MaxResourceURI)
	}
	head, _, _ := strings.Cut(raw, "{")
	if i := strings.Index(head, ":"); i <= 0 {
		return fmt.Errorf("the URI template %q has no scheme before its first variable", clipURI(raw))
	}
	if err := CheckOwnResourceURI(FillResourceTemplate(raw)); err != nil {
		return fmt.Errorf("URI template: %w", err)
	}
	return nil
}

// templateVar is a URI template's expression.
var templateVar = regexp.MustCompile(`\{[^{}]*\}`)

// FillResourceTemplate is raw with every expression replaced by "x": the
// template's literal text as a URI.
func FillResourceTemplate(raw string) string { return templateVar.ReplaceAllString(raw, "x") }

// clipURI shortens s for an error message.
func clipURI(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:200] + "…"
}
