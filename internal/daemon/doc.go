// Package daemon owns the life of one long-running kernel per $ASTRID_HOME
// (DESIGN §8): the lock that makes it the only daemon of that home, the run
// directory with its pid file (written once the kernel has booted: the
// daemon's readiness signal) and the socket path the uplink serves, the
// cleaning of what a killed daemon left behind, the structured log file and
// its rotation, the status file it rewrites while it runs, reloads on
// request, the admin HTTP server (internal/admin, [admin] in config.toml)
// with the web view (internal/webview) and the handlers it is given mounted
// on it, its URL and token in run/admin.json (0600) for `astrid ui`, and an
// orderly shutdown: running agent turns cancelled and
// answered, capsules unloaded in reverse load order, the store closed, the
// run files removed.
//
// It must not serve the socket (the uplink capsule does, as one of the
// built-ins it is given), choose which capsules are built in (cmd/astrid
// passes them), make any security decision (the ACLs are internal/dispatch's,
// capabilities internal/host's, which reloads are allowed internal/runtime's),
// or handle signals itself: its caller maps SIGTERM/SIGINT to cancelling
// Run's context and SIGHUP to Options.Reload, so that it runs the same in a
// test and in a process.
package daemon
