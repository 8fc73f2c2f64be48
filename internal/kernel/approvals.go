package kernel

import "github.com/astrid-go/astrid/internal/host/ask"

// HostApprovals is the state of the host approval call: its "this session"
// allowances and, with Store, its "always" ones (astrid approvals lists and
// revokes them).
func (k *Kernel) HostApprovals() *ask.Approvals { return k.hostDeps.Approvals }
