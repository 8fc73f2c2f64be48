package agentclient

import (
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// DecisionChoices is how a frontend offers the four answers to an approval
// question; ParseDecision reads the answer a person gives.
const DecisionChoices = "[y] once  [s] this session  [a] always  [N] deny"

// ParseDecision reads a person's answer to an approval question (y/once,
// s/session, a/always, anything else) as the ipc.Decision* it means;
// anything unclear is a denial, so a stray key never allows a call.
func ParseDecision(answer string) string {
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes", "o", "once":
		return ipc.DecisionApprove
	case "s", "session":
		return ipc.DecisionApproveSession
	case "a", "always":
		return ipc.DecisionApproveAlways
	}
	return ipc.DecisionDeny
}
