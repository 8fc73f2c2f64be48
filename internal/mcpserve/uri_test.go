package mcpserve

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/astrid-go/astrid/ipc"
)

// Escape attempts and malformed URIs a client may send, refused before a
// capsule sees them; and the ordinary ones served.
func TestCheckURI(t *testing.T) {
	for _, c := range []struct {
		uri  string
		want string // "" when accepted
	}{
		{"test://static-text", ""},
		{"file:///home/a/notes.md", ""},
		{"docs://page/intro?lang=en#top", ""},
		{"docs://page/a..b", ""},
		{"docs://page/...", ""},
		{"docs://page/%41", ""},
		{"", "empty"},
		{"docs://" + strings.Repeat("a", MaxURI), "longest"},
		{"docs://page/\xff", "not UTF-8"},
		{"docs://page/a b", "space"},
		{"docs://page/a\x00", "control"},
		{"docs://page/a\r\nHost: x", "control"},
		{"docs://page/\u0085", "control"},
		{"page/intro", "no scheme"},
		{"/etc/passwd", "no scheme"},
		{"../etc/passwd", "no scheme"},
		{"file:///srv/../etc/passwd", `".."`},
		{"docs://page/..", `".."`},
		{"docs://../x", `".."`},
		{"docs:..", `".."`},
		{`docs://page/..\x`, `".."`},
		{"docs://page/%2e%2e/x", `".."`},
		{"docs://page/%2E%2e%2fx", `".."`},
		{"docs://page/%252e%252e/x", `".."`},
		{"docs://page/..%5cx", `".."`},
		{"docs://page/x?p=../y", `".."`},
		{"docs://page/%zz", "URI"},
		{"docs://page/%25252525252e", "more than four times"},
	} {
		err := checkURI(c.uri)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("checkURI(%.40q): %v; want accepted", c.uri, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("checkURI(%.40q): %v; want an error saying %q", c.uri, err, c.want)
		}
	}
}

func TestCheckTemplate(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		ok   bool
	}{
		{"test://template/{id}/data", true},
		{"docs://page/{name}", true},
		{"{scheme}://x", false},
		{"page/{name}", false},
		{"docs://page/{name", false},
		{"docs://../{name}", false},
		{"docs://" + strings.Repeat("a", MaxURI) + "{x}", false},
	} {
		if _, err := checkTemplate(c.tmpl); (err == nil) != c.ok {
			t.Errorf("checkTemplate(%.40q): %v; want ok %v", c.tmpl, err, c.ok)
		}
	}
}

// FuzzCheckURI holds checkURI to what it promises: a URI it accepts is
// bounded, UTF-8, free of control characters and spaces, parses with a
// scheme, and has no ".." segment however often it is decoded.
func FuzzCheckURI(f *testing.F) {
	for _, s := range []string{"test://static-text", "docs://page/%2e%2e/x", "file:///a/../b", "a:b", "docs://p/%252e%252e", `x:\..\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		if checkURI(uri) != nil {
			return
		}
		if uri == "" || len(uri) > MaxURI || !utf8.ValidString(uri) || strings.ContainsAny(uri, " \t\r\n\x00\x7f") {
			t.Fatalf("accepted %q", uri)
		}
		u, err := url.Parse(uri)
		if err != nil || u.Scheme == "" {
			t.Fatalf("accepted %q: %v", uri, err)
		}
		s := uri
		for range 8 {
			for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(`/\?#:`, r) }) {
				if seg == ".." {
					t.Fatalf("accepted %q: a .. segment in %q", uri, s)
				}
			}
			d, err := url.PathUnescape(s)
			if err != nil || d == s {
				break
			}
			s = d
		}
	})
}

// FuzzCheckTemplate holds checkTemplate to what it promises: a template
// it accepts parses as RFC 6570, has a scheme before its first
// expression, and its literal text (expressions filled) passes checkURI.
func FuzzCheckTemplate(f *testing.F) {
	for _, s := range []string{"test://template/{id}/data", "docs://{a}/{b}", "{x}://y", "docs://../{n}", "a:{b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tmpl, err := checkTemplate(raw)
		if err != nil {
			return
		}
		if tmpl == nil || tmpl.Raw() != raw {
			t.Fatalf("accepted %q without its template", raw)
		}
		head, _, _ := strings.Cut(raw, "{")
		if !strings.Contains(head, ":") || strings.HasPrefix(head, ":") {
			t.Fatalf("accepted %q: no scheme before its first expression", raw)
		}
		if err := checkURI(ipc.FillResourceTemplate(raw)); err != nil {
			t.Fatalf("accepted %q: %v", raw, err)
		}
	})
}
