// Package toolclient is an orchestrator's side of the tool convention, as the
// frontends share it (the CLI today, the uplink later): make a tool call and
// wait for its consolidated result, cancel it, list the tools capsules
// describe.
//
// It reaches the kernel only through the publish/subscribe entry a frontend
// is given (Kernel, under the identity ACL names); it must not boot, wire or
// reach into a kernel, and the kernel must not import it: the kernel does
// not know the tool convention.
package toolclient
