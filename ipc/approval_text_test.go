package ipc

import (
	"strings"
	"testing"
)

func TestApprovalTextShowsWhatRuns(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"rm -rf build", 0, "rm -rf build"},
		{"evil\u202etxt.sh", 0, `evil\u202etxt.sh`},
		{"a\u200bb\u2028c\td\x00", 0, `a\u200bb\u2028c\u0009d\u0000`},
		{"bad\xffbyte", 0, `bad\ufffdbyte`},
		{"tag\U000E0041", 0, `tag\udb40\udc41`},
		{strings.Repeat("é", 10), 5, "éé … [truncated: 4 of 20 bytes shown]"},
		{"short", 5, "short"},
	} {
		if got := ApprovalText(tc.in, tc.max); got != tc.want {
			t.Errorf("ApprovalText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
