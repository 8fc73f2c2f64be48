package ipc

import (
	"errors"
	"strings"
	"testing"
)

func TestValidatePrincipal(t *testing.T) {
	cases := []struct {
		p  string
		ok bool
	}{
		{DefaultPrincipal, true},
		{"alice", true},
		{"A-Z_0-9", true},
		{"-", true},
		{strings.Repeat("p", 64), true},
		{strings.Repeat("p", 65), false},
		{"", false},
		{"a.b", false},
		{"a:b", false},
		{"a b", false},
		{"é", false},
		{"a*", false},
		{"../x", false},
	}
	for _, c := range cases {
		err := ValidatePrincipal(c.p)
		if (err == nil) != c.ok {
			t.Errorf("ValidatePrincipal(%q) = %v, want ok=%v", c.p, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidPrincipal) {
			t.Errorf("ValidatePrincipal(%q) does not wrap ErrInvalidPrincipal: %v", c.p, err)
		}
	}
}
