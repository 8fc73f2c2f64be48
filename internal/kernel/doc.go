// Package kernel boots and shuts down one Astrid kernel: the bus, the
// dispatcher, the store, the host services and the capsule registry, with the
// built-in capsules loaded natively and the one listener that turns
// tool.v1.request.cancel into interrupted calls.
//
// It wires; it decides nothing a lower package owns (ACLs, capability checks,
// routing).
package kernel
