// Package netio holds a capsule's sockets (hostapi.Net): the handle table
// (Table), the streams it connects through the capsule's egress dialer,
// loopback TCP and unix listeners (a unix socket bound through an open
// directory without following symlinks, 0600 from the start, a stale one
// replaced only when nothing listens on it), the peers' credentials, and
// how a network wait ends (its timeout, the call's cancellation, the
// peer).
//
// Streams and listeners belong to the capsule and the principal that
// opened them, not to a call: another principal's handle is as unknown as
// a made-up one, and every handle closes when the capsule unloads
// (CloseAll). It must not leave a socket open, or a socket file behind, for
// a capsule that is gone.
//
// It decides no grant: internal/host checks net_bind and resolves run://
// before Bind, and builds the dialer that checks net_connect and the SSRF
// guard. It knows no bus and no call beyond a Caller.
package netio
