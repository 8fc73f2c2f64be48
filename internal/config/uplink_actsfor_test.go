package config

import (
	"strings"
	"testing"
)

func TestActsForNamesCapsulesAndPrincipals(t *testing.T) {
	u := Uplink{ActsFor: []string{"chat-bridge=alice", "chat-bridge = bob", "open-bridge=*"}}
	may := u.UplinkActsFor()
	for _, tc := range []struct {
		capsule, principal string
		want               bool
	}{
		{"chat-bridge", "alice", true},
		{"chat-bridge", "bob", true},
		{"chat-bridge", "mallory", false},
		{"chat-bridge", "*", false},
		{"open-bridge", "anyone", true},
		{"other-bridge", "alice", false},
		{"", "alice", false},
	} {
		if got := may(tc.capsule, tc.principal); got != tc.want {
			t.Errorf("may %q act for %q: %v, want %v", tc.capsule, tc.principal, got, tc.want)
		}
	}
}

func TestActsForRefusesWhatItCannotName(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{"chat-bridge", "not capsule=principal"},
		{"-rf=alice", "must start and end with a letter or digit"},
		{"../x=alice", "may use only"},
		{"chat-bridge=", "principal is empty"},
		{"chat-bridge=../../etc", "chat-bridge=../../etc"},
	} {
		u := Uplink{ActsFor: []string{tc.entry}}
		if _, err := u.ActsForByCapsule(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("acts_for %q: %v, want an error saying %q", tc.entry, err, tc.want)
		}
		if u.UplinkActsFor()("chat-bridge", "alice") {
			t.Errorf("acts_for %q, which does not parse, lets a capsule act", tc.entry)
		}
	}
}
