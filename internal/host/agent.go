package host

import (
	"github.com/astrid-go/astrid/hostapi"
)

// AgentPolicy implements hostapi.Agents: the invoking principal's limits,
// from a view of the store re-read at most once a second, so an agent
// created, changed or removed while the kernel runs counts within that.
func (call *Call) AgentPolicy() (hostapi.AgentPolicy, error) {
	defer call.leave(call.enter(opAgentPolicy))
	if call.c.deps.Agents == nil {
		return hostapi.AgentPolicy{}, nil
	}
	a, ok, err := call.c.deps.Agents.Get(call.principal)
	if err != nil {
		// A record that does not read limits nothing it should: refuse.
		return hostapi.AgentPolicy{}, hostapi.Errorf(hostapi.CodeUnavailable, "agent_policy", "%v", err)
	}
	if !ok {
		return hostapi.AgentPolicy{}, nil
	}
	return hostapi.AgentPolicy{Agent: true, ReadOnly: a.ReadOnly, Capsules: a.Capsules, TokensPerDay: a.TokensPerDay}, nil
}
