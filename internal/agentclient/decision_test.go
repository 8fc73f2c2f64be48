package agentclient

import (
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

func TestParseDecision(t *testing.T) {
	for answer, want := range map[string]string{
		"y": ipc.DecisionApprove, " Yes\n": ipc.DecisionApprove, "once": ipc.DecisionApprove, "o": ipc.DecisionApprove,
		"s": ipc.DecisionApproveSession, "SESSION": ipc.DecisionApproveSession,
		"a": ipc.DecisionApproveAlways, "always\n": ipc.DecisionApproveAlways,
		"": ipc.DecisionDeny, "n": ipc.DecisionDeny, "maybe": ipc.DecisionDeny, "yy": ipc.DecisionDeny, "\x1b": ipc.DecisionDeny,
	} {
		if got := ParseDecision(answer); got != want {
			t.Errorf("ParseDecision(%q) = %s, want %s", answer, got, want)
		}
	}
}
