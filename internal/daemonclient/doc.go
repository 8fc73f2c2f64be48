// Package daemonclient is the CLI's side of the daemon's socket
// ($ASTRID_HOME/run/astrid.sock, DESIGN §8; the wire contract is
// docs/uplink.md): Dial connects and shakes hands, and the Client is the
// kernel as the CLI's client packages reach it (agentclient, toolclient,
// registryclient, sessionclient Kernel), over the wire instead of in
// process, so a command runs the same code either way.
//
// It owns the connection: requests and their answers, the subscriptions'
// events, and what happens when the daemon goes away (every wait ends with
// ErrDisconnected). It must not decide what a command means (the client
// packages do) and must not start a daemon (cmd/astrid does).
package daemonclient
