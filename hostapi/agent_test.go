package hostapi

import "testing"

func TestAgentPolicyMayUse(t *testing.T) {
	ro := AgentPolicy{Agent: true, ReadOnly: true}
	fsOnly := AgentPolicy{Agent: true, Capsules: []string{"astrid-capsule-fs"}}
	for _, c := range []struct {
		p       AgentPolicy
		capsule string
		mutable bool
		want    bool
	}{
		{AgentPolicy{}, "any", true, true},
		{ro, "astrid-capsule-fs", false, true},
		{ro, "astrid-capsule-fs", true, false},
		{ro, "astrid-capsule-shell", true, false},
		{fsOnly, "astrid-capsule-fs", true, true},
		{fsOnly, "astrid-capsule-shell", false, false},
		{fsOnly, "astrid-capsule-fs-evil", false, false},
		{fsOnly, "", false, false},
	} {
		if got := c.p.MayUse(c.capsule, c.mutable); got != c.want {
			t.Errorf("%+v.MayUse(%q, mutable %v) = %v, want %v", c.p, c.capsule, c.mutable, got, c.want)
		}
	}
}
