package egress

import (
	"errors"
	"net/netip"
)

var (
	// ErrForbiddenAddress is wrapped by every refusal of an IP address that
	// must not be reached (loopback, private, link-local, ...), whatever the
	// host name that led to it.
	ErrForbiddenAddress = errors.New("forbidden address")

	// ErrDenied is wrapped when a capability check (the `net` or
	// `net_connect` gate) or the scheme or redirect policy refuses a request.
	ErrDenied = errors.New("denied")

	// ErrInvalidAddress is wrapped when a host, port, network or URL cannot be
	// read unambiguously; such input is refused rather than guessed at.
	ErrInvalidAddress = errors.New("invalid address")
)

// AddrError names a refused address and why it is refused. It unwraps to
// ErrForbiddenAddress.
type AddrError struct {
	Addr   netip.Addr
	Reason string
}

func (e *AddrError) Error() string {
	return "forbidden address " + e.Addr.String() + ": " + e.Reason
}

func (e *AddrError) Unwrap() error { return ErrForbiddenAddress }
