package gate

import (
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// TestIdentity is upstream's tests 15-18 plus unrecognised entries and
// levels. Each row lists the levels that must pass; the others must fail.
func TestIdentity(t *testing.T) {
	cases := []struct {
		name    string
		granted []string
		allowed []string
	}{
		{name: "15 deny by default"},
		{name: "16 resolve only", granted: []string{"resolve"}, allowed: []string{"resolve"}},
		{name: "17 link implies resolve", granted: []string{"link"}, allowed: []string{"resolve", "link"}},
		{name: "18 admin implies all", granted: []string{"admin"}, allowed: []string{"resolve", "link", "admin"}},
		{name: "order does not matter", granted: []string{"admin", "resolve"}, allowed: []string{"resolve", "link", "admin"}},
		{name: "unknown entries grant nothing", granted: []string{"Admin", "superuser", ""}},
		{name: "unknown beside known", granted: []string{"root", "link"}, allowed: []string{"resolve", "link"}},
	}
	levels := []string{"resolve", "link", "admin", "Admin", "RESOLVE", "", "unlink"}
	for _, tc := range cases {
		g := mustGate(t, manifest.Capabilities{Identity: tc.granted})
		for _, level := range levels {
			t.Run(tc.name+"/"+level, func(t *testing.T) {
				err := g.Identity(level)
				for _, a := range tc.allowed {
					if a == level {
						if err != nil {
							t.Fatalf("denied: %v", err)
						}
						return
					}
				}
				wantDenied(t, err, "identity")
			})
		}
	}
}
