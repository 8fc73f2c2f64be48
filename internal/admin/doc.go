// Package admin owns the daemon's admin HTTP server (DESIGN §10): a
// listener on a loopback address only, a random token made for each run and
// written 0600 where `astrid ui` reads it, and the checks every request
// passes before any handler sees it: the Host header names the loopback
// listener itself (no DNS rebinding), an Origin, when a request has one, is
// the server's own (no cross-site requests), and the token comes as a query
// parameter once (traded for a cookie), in that cookie, or in an
// Authorization header. Handle mounts further handlers (the web view, the
// metrics) behind the same checks.
//
// It must not know what it serves (internal/webview builds the page, the
// metrics package its handler) nor read the kernel; it never listens on a
// non-loopback address, whatever it is given.
package admin
