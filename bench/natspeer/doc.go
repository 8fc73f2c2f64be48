// Package natspeer is the NATS peer our benchmarks are measured against
// (DESIGN §7): an embedded nats-server reached through in-process
// connections, set up the same way for every comparison that uses it.
//
// It lives in the bench module so that nats-server never enters the
// product's module graph.
package natspeer
