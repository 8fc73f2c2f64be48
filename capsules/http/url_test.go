package http

import (
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" accepts; else a substring of the error
		norm string // the accepted URL, when it differs from in
	}{
		{"https://example.com/a?b=c", "", ""},
		{"  HTTP://Example.com/  ", "", "http://Example.com/"},
		{"https://example.com/page#section", "", "https://example.com/page"},
		{"", "url is empty", ""},
		{"   ", "url is empty", ""},
		{"file:///etc/passwd", `scheme "file" is refused`, ""},
		{"ftp://example.com/x", `scheme "ftp" is refused`, ""},
		{"gopher://127.0.0.1:6379/_INFO", `scheme "gopher" is refused`, ""},
		{"javascript:alert(1)", `scheme "javascript" is refused`, ""},
		{"example.com/x", "has no scheme", ""},
		{"//example.com/x", "has no scheme", ""},
		{"https://user:secret@example.com/", "carries userinfo", ""},
		{"https://user@example.com/", "carries userinfo", ""},
		{"https://:@example.com/", "carries userinfo", ""},
		{"http:example.com", "has no host", ""},
		{"https:///path", "has no host", ""},
		{"http://[fe80::1%25eth0]/", "IPv6 zone", ""},
		{"http://exa mple.com/", "not a URL", ""},
		{"http://example.com/\x00", "not a URL", ""},
		{"https://example.com/" + strings.Repeat("a", 10<<10), "fetch_url takes URLs of at most 8192 bytes", ""},
	} {
		u, err := checkURL(c.in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("checkURL(%q): %v", c.in, err)
		case c.want == "":
			want := c.norm
			if want == "" {
				want = c.in
			}
			if u.String() != want {
				t.Errorf("checkURL(%q) = %s, want %s", c.in, u, want)
			}
		case err == nil:
			t.Errorf("checkURL(%q) accepted %s; want an error containing %q", c.in, u, c.want)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("checkURL(%q): %v; want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestCheckURLQuotesALongURLShortened(t *testing.T) {
	_, err := checkURL("ftp://example.com/" + strings.Repeat("x", 4000))
	if err == nil || len(err.Error()) > 400 {
		t.Fatalf("error %d bytes long: %v", len(err.Error()), err)
	}
}
