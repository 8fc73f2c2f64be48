package ipc

import (
	"strings"
	"testing"
)

func TestValidSessionID(t *testing.T) {
	for s, want := range map[string]bool{
		"s-1a2b": true, "default": true, "A_b-9": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "a/b": false, "a.b": false, "a b": false, "é": false, "a\x00": false,
	} {
		if got := ValidSessionID(s); got != want {
			t.Errorf("ValidSessionID(%q) = %v, want %v", s, got, want)
		}
	}
}
