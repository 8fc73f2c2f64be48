package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
)

// Dialer makes the raw TCP connections a capsule's `net_connect` grants.
type Dialer struct {
	g         *guard
	checkConn func(host string, port int) error
}

// NewDialer builds a Dialer. Options.CheckConn is required.
func NewDialer(opts Options) (*Dialer, error) {
	if opts.CheckConn == nil {
		return nil, errors.New("egress: NewDialer needs Options.CheckConn (the net_connect gate)")
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	g, err := newGuard(opts, timeout)
	if err != nil {
		return nil, err
	}
	return &Dialer{g: g, checkConn: opts.CheckConn}, nil
}

// DialContext connects to address ("host:port") over tcp, tcp4 or tcp6: the
// host is normalised, CheckConn is asked, the name is resolved once, every
// resolved address must pass the allowlist or CheckAddr, and only those
// addresses are dialled. Errors wrap ErrDenied, ErrForbiddenAddress or
// ErrInvalidAddress.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := splitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s %q: %w", network, address, err)
	}
	if err := d.checkConn(host, int(port)); err != nil {
		d.g.log.Warn("egress: dial denied by net_connect", "network", network, "host", host, "port", port, "reason", err)
		return nil, fmt.Errorf("egress: dial %s %s: %w by net_connect: %w", network, address, ErrDenied, err)
	}
	return d.g.connect(ctx, network, host, port)
}

// splitHostPort splits and normalises "host:port"; the port must be numeric
// and non-zero (named ports would need a services lookup).
func splitHostPort(address string) (string, uint16, error) {
	rawHost, portText, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %w", err, ErrInvalidAddress)
	}
	port, err := parsePort(portText)
	if err != nil {
		return "", 0, err
	}
	host, err := NormalizeHost(rawHost)
	if err != nil {
		return "", 0, err
	}
	return host, port, nil
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("port %q is not 1-65535: %w", s, ErrInvalidAddress)
	}
	return uint16(n), nil
}
