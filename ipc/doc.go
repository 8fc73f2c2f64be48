// Package ipc owns the wire: the message envelope (its JSON form, and the
// compact binary form hosts exchange over NATS), its payload variants,
// what a valid payload is (ValidJSON: one JSON value in valid UTF-8), the
// topic rules with the two matchers (and whether two patterns overlap), and
// the tool convention's topic builders, tool-name rule and payload codec.
//
// It is a leaf: it imports nothing of this module, holds no state, and does no
// I/O. Routing, ACLs and delivery live in internal/bus and internal/dispatch.
package ipc
