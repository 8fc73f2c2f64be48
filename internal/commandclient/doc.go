// Package commandclient is a frontend's side of the capsules' slash
// commands ([[command]] entries, seed 003; docs/commands.md): it gathers
// them from the static engines (static.v1.request.commands), names each
// one so that none shadows a frontend's built-in or another capsule's
// command, and expands `/name args` into the command's prompt, for chat
// and ACP.
//
// It reaches the kernel only through the publish/subscribe entry a
// frontend is given, under its own least-privilege identity (ACL), and
// accepts a capsule's answer only on that capsule's own answer topic, as
// the kernel stamped it. It runs no command itself: an expansion is a
// prompt like any other, and the kernel must not import it.
package commandclient
