// Package sessionclient is a frontend's side of the session store's
// protocol (spec/capsules-cli.md §7.1, capsules/session): list, read and
// delete a principal's sessions by request and scoped reply, for
// `astrid session`.
//
// It reaches the kernel only through the publish/subscribe entry a
// frontend is given (toolclient.Kernel), under its own least-privilege
// identity (ACL); it does not know how the store keeps sessions, and the
// kernel must not import it.
package sessionclient
