// Package uplink is the CLI uplink capsule (DESIGN §8, seed 003
// `uplink = true`): it serves the daemon's unix socket
// ($ASTRID_HOME/run/astrid.sock, granted as "unix:run://astrid.sock") to
// the frontends of the people on this machine and acts on the bus for the
// principal each peer's uid maps to. The wire contract is docs/uplink.md
// (internal/uplinkwire holds its types).
//
// It owns the connections: the uid check, the handshake, each client's
// ingress allowlist (its principal's list from the operator's config,
// inside its manifest's [publish], checked here before the kernel checks
// the manifest again), each client's subscriptions and its bounded
// outbound queue (a client that does not read is disconnected, the kernel
// never waits), the client limit, and each principal's clients and bytes.
// It hands the query op to the daemon's reporter, naming the asker. It
// must not decide what a query shows or what a command means (the daemon
// and the CLI's client packages do) and must not act as itself: every
// publish and subscription is on behalf of a connected principal
// (hostapi.Uplink).
//
// Unlike the other built-ins it is a native service (sdk.Capsule.Serve): it
// starts goroutines (one request reader per client, one pump per
// subscription, each writing its own frames; see outbox) and uses channels, so it does not build to wasm; see
// docs/rationale/daemon.md, "Why is the uplink a native service capsule?".
package uplink
