//go:build wasip1

package sdk

import (
	"context"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
)

// RunService runs the served capsule's service (Capsule.Serve) on the run
// loop's instance, for package sdk/wasmrun's astrid_run export (docs/abi.md
// §6): the host calls it once after load, on an instance of its own, and
// interrupts it when the capsule unloads, so its context never ends by
// itself. The service must wait in the host (ipc_recv, net_accept,
// net_read) at least once every 5 seconds, the run loop's sign of
// progress. It returns 1 when the service failed, 0 when there is none or
// it returned; either way the engine then fails and the runtime's health
// monitor restarts the capsule.
func RunService() int32 {
	if served == nil || served.service == nil {
		return 0
	}
	if err := served.service(context.Background(), &theHost); err != nil {
		theHost.Log(hostapi.LogError, fmt.Sprintf("service ended: %v", err))
		return 1
	}
	return 0
}
