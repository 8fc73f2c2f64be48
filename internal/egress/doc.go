// Package egress owns every outgoing connection a capsule makes: the TCP
// Dialer behind the `net_connect` capability and the HTTP client behind `net`.
// It decides whether the IP address actually being connected may be reached
// (CheckAddr), canonicalises the host spellings a capsule may use
// (NormalizeHost), and applies the operator's allowlist of local endpoints.
//
// The host-level grant is not decided here: the caller passes the `net` and
// `net_connect` checks of internal/gate as Options.CheckHost and
// Options.CheckConn, so this package never imports the gate and the gate never
// dials. The order is always gate first, then resolve, then check every
// resolved address, then connect only to those checked addresses; the host
// name is never handed to anything that could resolve it again, which is what
// keeps DNS rebinding and redirects from reaching an address that was not
// checked. The default dialer checks the socket address once more in its
// Control function.
//
// It must not read proxy settings from the environment, follow a redirect
// without re-running the gate on its host, or offer a refused address to the
// network. It holds no global state; a Dialer and a client are safe for
// concurrent use.
package egress
