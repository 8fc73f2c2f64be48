// Package registryclient is a frontend's side of the provider registry's
// protocol (spec/capsules-cli.md §6.5, capsules/registry): list the
// models the loaded providers offer, read, set and unset a principal's
// active model, by request and scoped reply, for `astrid models`.
//
// It reaches the kernel only through the publish/subscribe entry a
// frontend is given, under its own least-privilege identity (ACL); it
// accepts an answer only from a capsule that intercepts the request's
// topic. It does not know how the registry discovers models, and the
// kernel must not import it.
package registryclient
