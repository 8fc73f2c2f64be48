package egress

import (
	"context"
	"net/netip"
)

// A connection to a loopback or private address (a local model server, a
// database on the LAN) that the operator's allowlist does not name may
// still go ahead if the person consents (issue 36 item 6): the host puts a
// LocalConsent on the call's context, and the guard asks it before refusing.
// Only loopback and private-use addresses (RFC 1918, IPv6 ULA) can be
// consented to: link-local (cloud metadata), multicast, CGNAT, embedded
// IPv4 forms and the rest stay refused whatever anyone says.

// LocalConsent decides one connection to target ("host:port" as the
// capsule named it) whose addresses are local: nil lets it go ahead, an
// error (which the dial's error wraps) refuses it. It may block while a
// person is asked.
type LocalConsent func(ctx context.Context, target string, addrs []netip.Addr) error

type consentKey struct{}

type consentedKey struct{}

// WithLocalConsent returns ctx carrying consent for the dials made under it.
func WithLocalConsent(ctx context.Context, consent LocalConsent) context.Context {
	return context.WithValue(ctx, consentKey{}, consent)
}

func consentOf(ctx context.Context) LocalConsent {
	f, _ := ctx.Value(consentKey{}).(LocalConsent)
	return f
}

// consentable reports whether a person may let a connection reach ip.
func consentable(ip netip.Addr) bool {
	if ip.Zone() != "" {
		return false
	}
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	return ip.IsLoopback() || ip.IsPrivate()
}

// consentedTo is the addresses and port the person let one dial reach.
type consentedTo struct {
	addrs []netip.Addr
	port  uint16
}

// withConsented marks addrs on port as consented to on ctx, so that the
// socket's last check (control) lets exactly those through.
func withConsented(ctx context.Context, addrs []netip.Addr, port uint16) context.Context {
	return context.WithValue(ctx, consentedKey{}, consentedTo{addrs: addrs, port: port})
}

func consented(ctx context.Context, ap netip.AddrPort) bool {
	got, ok := ctx.Value(consentedKey{}).(consentedTo)
	if !ok || got.port != ap.Port() {
		return false
	}
	for _, a := range got.addrs {
		if a.Unmap() == ap.Addr().Unmap() {
			return true
		}
	}
	return false
}
