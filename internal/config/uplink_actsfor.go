package config

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/manifest"
)

// AnyPrincipal in an acts_for entry lets the capsule act for every
// principal.
const AnyPrincipal = "*"

// ActsForByCapsule parses ActsFor: capsule id → the principals it may act
// for (AnyPrincipal for all).
func (u Uplink) ActsForByCapsule() (map[string][]string, error) {
	out := map[string][]string{}
	for _, entry := range u.ActsFor {
		capsule, principal, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not capsule=principal", entry)
		}
		capsule, principal = strings.TrimSpace(capsule), strings.TrimSpace(principal)
		if err := manifest.ValidateID(capsule); err != nil {
			return nil, fmt.Errorf("%q: %w", entry, err)
		}
		if principal != AnyPrincipal {
			if err := checkPrincipal(principal); err != nil {
				return nil, fmt.Errorf("%q: %w", entry, err)
			}
		}
		out[capsule] = append(out[capsule], principal)
	}
	return out, nil
}

// UplinkActsFor answers whether installed uplink capsule may act for
// principal under u (ActsFor). A configuration that does not parse lets
// no one act (Validate reports it first).
func (u Uplink) UplinkActsFor() func(capsule, principal string) bool {
	m, err := u.ActsForByCapsule()
	if err != nil {
		m = nil
	}
	return func(capsule, principal string) bool {
		for _, p := range m[capsule] {
			if p == AnyPrincipal || p == principal {
				return true
			}
		}
		return false
	}
}
