// Package kernel boots and shuts down one Astrid kernel: the bus, the
// dispatcher, the store, the host services and the capsule registry, with the
// built-in capsules it is given loaded natively, the frontend identities it is
// given registered, and the one listener that turns a cancel request
// (ipc.CancelRequestTopic, naming requests by correlation id) into
// interrupted calls.
//
// It wires; it decides nothing a lower package owns (ACLs, capability checks,
// routing). It names no topic of the agent stack (internal/archtest): the
// router turns the tool convention's cancel into the kernel's, the manifest
// package says which tools a capsule provides. The tool client frontends
// share is internal/toolclient, and cmd/astrid passes the built-in capsules
// (Options.Builtins) and frontends (Options.Frontends); the kernel imports
// neither.
package kernel
