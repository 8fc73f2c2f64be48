package host

import (
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// askUnconfined asks the person, every time, whether program may run
// outside the sandbox (DESIGN §11): no session or "always" allowance is
// consulted or kept, and any approval counts for this run only. The
// question says what is at stake, and frontends do not answer it from
// --yes (ipc.ApprovalRequired.Unconfined).
func (call *Call) askUnconfined(op, program string, args []string) error {
	a := call.c.deps.Approvals
	if a == nil || call.c.deps.Bus == nil {
		return hostapi.Errorf(hostapi.CodeDenied, op, "running %s outside the sandbox needs a person to approve it, and this kernel has no frontend to ask", program)
	}
	resource := strings.TrimSpace(program + " " + strings.Join(args, " "))
	decision, err := a.Ask(call.asker(), "run outside the sandbox", resource,
		"Capsule '"+call.c.id+"' asks to run a process OUTSIDE the sandbox, with your full authority: every file, the network, other processes. This is asked every time.", true)
	if err != nil {
		return err
	}
	switch decision {
	case ipc.DecisionApprove, ipc.DecisionApproveSession, ipc.DecisionApproveAlways:
		call.c.log.Warn("a process runs outside the sandbox, approved by the person for this once", "program", program, "principal", call.principal)
		return nil
	}
	return hostapi.Errorf(hostapi.CodeDenied, op, "the person did not approve running %s outside the sandbox", program)
}
