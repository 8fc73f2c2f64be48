package manifest

import (
	"strings"
	"testing"
)

// Capsule ids an attacker or a typo could choose: each names a directory,
// NATS subjects and a CLI argument, so what could read as a flag, escape
// a path or exceed a file name is refused at check and install.
func TestValidateID(t *testing.T) {
	for _, tc := range []struct {
		id, want string // want "" means valid
	}{
		{"fs", ""},
		{"astrid-capsule-openai-compat", ""},
		{"9lives", ""},
		{strings.Repeat("a", MaxIDLength), ""},
		{"", "must not be empty"},
		{"-rf", "must start and end with a letter or digit"},
		{"--help", "must start and end with a letter or digit"},
		{"trailing-", "must start and end with a letter or digit"},
		{"-", "must start and end with a letter or digit"},
		{strings.Repeat("a", MaxIDLength+1), "at most 64"},
		{strings.Repeat("a", 300), "is 300 bytes long"},
		{"../etc", "may use only lowercase"},
		{"a/b", "may use only lowercase"},
		{"a.b", "may use only lowercase"},
		{"A", "may use only lowercase"},
		{"a b", "may use only lowercase"},
		{"a\x00b", "may use only lowercase"},
		{"ａ", "may use only lowercase"}, // fullwidth a
		{ReservedID, "reserved"},
	} {
		err := ValidateID(tc.id)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ValidateID(%.30q) = %v, want valid", tc.id, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ValidateID(%.30q) = %v, want an error containing %q", tc.id, err, tc.want)
		}
	}
}
