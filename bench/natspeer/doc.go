// Package benchpeer holds the peers our benchmarks are measured against
// (DESIGN §7): an embedded nats-server reached through in-process
// connections, set up the same way for every package that compares with it.
//
// It is benchmark support only: every file but this one builds with the
// `bench` tag, so the race-enabled test build never links nats-server.
package benchpeer
