package manifest

import (
	"strings"
	"testing"
)

func TestExpandTemplate(t *testing.T) {
	values := map[string]string{"TOKEN": "s3cret", "ORG": "acme"}
	tests := []struct {
		in, want, err string
	}{
		{in: "Bearer ${secret:TOKEN}", want: "Bearer s3cret"},
		{in: "${env:ORG}/${secret:TOKEN}", want: "acme/s3cret"},
		{in: "costs $$5 and $x", want: "costs $5 and $x"},
		{in: "trailing $", want: "trailing $"},
		{in: "${secret:MISSING}", err: "${secret:MISSING} has no value"},
		{in: "${secret:TOKEN", err: "no closing }"},
		{in: "${TOKEN}", err: "write ${secret:KEY} or ${env:KEY}"},
		{in: "${env:bad key}", err: "is not an [env] key"},
	}
	for _, tt := range tests {
		got, err := ExpandTemplate(tt.in, values)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ExpandTemplate(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ExpandTemplate(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("an error quotes a value: %v", err)
		}
	}
}

func TestNetGrants(t *testing.T) {
	tests := []struct {
		net  []string
		host string
		want bool
	}{
		{[]string{"*"}, "a.example", true},
		{[]string{"example.com"}, "mcp.example.com", true},
		{[]string{"example.com"}, "EXAMPLE.com.", true},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"example.com"}, "evilexample.com", false},
		{[]string{"127.0.0.1"}, "127.0.0.1", true},
		{[]string{"::1"}, "::1", true},
		{[]string{"127.0.0.1"}, "127.0.0.2", false},
	}
	for _, tt := range tests {
		if got := netGrants(tt.net, tt.host); got != tt.want {
			t.Errorf("netGrants(%q, %q) = %v, want %v", tt.net, tt.host, got, tt.want)
		}
	}
}

// FuzzParseTemplate: any input parses or errors without panicking, and a
// parse that succeeds reassembles to an expansion that holds every literal.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"Bearer ${secret:TOKEN}", "$$", "${", "${env:A}${env:B}", "a$b", "${secret:}", strings.Repeat("${env:K}", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lits, refs, err := ParseTemplate(s)
		if err != nil {
			return
		}
		if len(lits) != len(refs)+1 {
			t.Fatalf("%q: %d literals for %d references", s, len(lits), len(refs))
		}
		values := map[string]string{}
		for _, r := range refs {
			if r.Kind != RefSecret && r.Kind != RefEnv || !validEnvKey(r.Key) {
				t.Fatalf("%q: bad reference %+v", s, r)
			}
			values[r.Key] = "V"
		}
		out, err := ExpandTemplate(s, values)
		if err != nil {
			t.Fatalf("%q parses but does not expand: %v", s, err)
		}
		for _, l := range lits {
			if !strings.Contains(out, l) {
				t.Fatalf("%q: expansion %q lost literal %q", s, out, l)
			}
		}
	})
}
