package hostapi

import "slices"

// Agents tells a capsule the invoking principal's limits (DESIGN §13,
// `astrid agent create`), so that the capsules offering and gating tools
// hold an agent to them: the prompt builder offers it only the tools it
// may use, and the approval layer refuses any other it calls.
type Agents interface {
	// AgentPolicy is the invoking principal's limits; the zero policy
	// (no limits) for a principal no operator created as an agent.
	AgentPolicy() (AgentPolicy, error)
}

// AgentPolicy is one principal's limits on tools and models.
type AgentPolicy struct {
	// Agent is true when an operator created the principal as an agent.
	Agent bool `json:"agent,omitempty"`
	// ReadOnly: no mutable tool is offered or allowed.
	ReadOnly bool `json:"read_only,omitempty"`
	// Capsules whose tools it may use; empty: all.
	Capsules []string `json:"capsules,omitempty"`
	// TokensPerDay bounds the LLM tokens of its turns per UTC day; 0:
	// no bound.
	TokensPerDay int64 `json:"tokens_per_day,omitempty"`
}

// MayUse reports whether the policy allows capsule's tool, mutable or not.
func (p AgentPolicy) MayUse(capsule string, mutable bool) bool {
	if p.ReadOnly && mutable {
		return false
	}
	return len(p.Capsules) == 0 || slices.Contains(p.Capsules, capsule)
}
