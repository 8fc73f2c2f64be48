package kernel

import (
	"fmt"

	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/ipc"
)

// callLost answers a tool call whose host was lost mid-call (DESIGN §9). The
// provider is on the lost host, so no one can publish its result as it
// would: the kernel publishes the failure on the tool's result topic, for
// the call's principal, and the router, which accepts a kernel-sourced
// failure for a call it forwarded, consolidates it for the caller at once.
// The calling host's kernel alone can do this: kernel events never cross
// hosts, and only the kernel publishes as ipc.KernelSourceID.
func (l *natsLink) callLost(c natsbus.LostCall) {
	d := l.dispatcher.Load()
	if d == nil {
		return
	}
	msg := fmt.Sprintf("tool %s: host %s, which was running this call, was lost (%s); the tool may have run there: check what it did before calling it again", c.Tool, c.Host, c.Reason)
	payload, err := ipc.ToolExecuteResult{CallID: c.CallID, Result: ipc.ToolCallResult{CallID: c.CallID, Content: msg, IsError: true}}.MarshalJSON()
	if err == nil {
		_, err = d.PublishKernelFor(c.Principal, ipc.ToolResultTopic(c.Tool), payload)
	}
	if err != nil {
		l.log.Warn("kernel: the failure reply of a call whose host was lost was not published", "call_id", c.CallID, "tool", c.Tool, "lost_host", c.Host, "error", err)
	}
}
