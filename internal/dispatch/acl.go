package dispatch

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// acl is one capsule's [publish] or [subscribe] key set, validated at
// registration. An empty set denies everything.
type acl struct {
	table    string // "[publish]" or "[subscribe]", for error messages
	patterns []string
	listing  string // patterns joined once, so a denial costs no formatting of the list
}

func newACL(table string, patterns []string) (acl, error) {
	for _, p := range patterns {
		if err := ipc.ValidatePattern(p); err != nil {
			return acl{}, fmt.Errorf("%s key: %w", table, err)
		}
	}
	a := acl{table: table, patterns: append([]string(nil), patterns...)}
	if len(patterns) == 0 {
		a.listing = "no keys: everything is denied"
	} else {
		a.listing = "patterns: " + strings.Join(patterns, ", ")
	}
	return a, nil
}

// allows reports whether some key matches subject under the receiver/ACL
// matcher. For a subscription, subject is the requested pattern taken as a
// topic, so `*` in it is a literal that only a `*` key can match: an exact key
// `foo.bar` never authorizes `foo.*` (spec bus.md §3.4, escalation rule).
func (a *acl) allows(subject string) bool {
	for _, p := range a.patterns {
		if ipc.MatchRoute(p, subject) {
			return true
		}
	}
	return false
}

// deny builds the error for a refused subject, naming the rule and its keys.
func (a *acl) deny(verb, subject, capsule string) error {
	return fmt.Errorf("dispatch: %s %s from capsule %s: %w %s (%s)", verb, subject, capsule, ErrDenied, a.table, a.listing)
}
