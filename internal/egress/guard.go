package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// guard is what the Dialer and the HTTP client share: resolve a checked host,
// refuse any forbidden address, connect only to checked addresses.
type guard struct {
	resolver Resolver
	dial     DialFunc
	allow    allowlist
	timeout  time.Duration
	log      *slog.Logger
}

func newGuard(opts Options, connectTimeout time.Duration) (*guard, error) {
	allow, err := parseAllowLocal(opts.AllowLocal)
	if err != nil {
		return nil, err
	}
	g := &guard{
		resolver: opts.Resolver,
		dial:     opts.Dial,
		allow:    allow,
		timeout:  connectTimeout,
		log:      opts.Logger,
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	if g.dial == nil {
		d := &net.Dialer{ControlContext: g.control}
		g.dial = d.DialContext
	}
	return g, nil
}

// permit decides one (address, port): the operator's allowlist first, then
// CheckAddr's ranges.
func (g *guard) permit(ip netip.Addr, port uint16) error {
	if g.allow.allows(ip, port) {
		return nil
	}
	if reason := forbidden(ip); reason != "" {
		return &AddrError{Addr: ip, Reason: reason}
	}
	return nil
}

// control runs on the socket about to connect, after any resolution, so it
// sees exactly the address the kernel will connect to. An address the
// person consented to for this dial (connect) passes.
func (g *guard) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: socket address %q: %w", address, ErrInvalidAddress)
	}
	if consented(ctx, ap) {
		return nil
	}
	if err := g.permit(ap.Addr(), ap.Port()); err != nil {
		g.log.Warn("egress: connection refused at socket", "network", network, "address", address, "reason", err)
		return fmt.Errorf("egress: connect %s %s: %w", network, address, err)
	}
	return nil
}

// connect resolves host (already normalised and gate-checked), refuses the
// whole dial if any resolved address is forbidden, and then tries the
// addresses in order. Refusing all rather than dropping the bad ones is
// deliberate: a name answering with a private address is an attack or a
// misconfiguration, and either way the capsule should hear about it.
func (g *guard) connect(ctx context.Context, network, host string, port uint16) (net.Conn, error) {
	target := net.JoinHostPort(host, strconv.Itoa(int(port)))
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	addrs, err := g.resolve(ctx, network, host)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s %s: %w", network, target, err)
	}
	var local []netip.Addr // forbidden, but a person may let them be reached
	for _, ip := range addrs {
		err := g.permit(ip, port)
		if err == nil {
			continue
		}
		if consentable(ip) && consentOf(ctx) != nil {
			local = append(local, ip)
			continue
		}
		g.log.Warn("egress: connection refused", "network", network, "target", target, "address", ip, "reason", err)
		return nil, fmt.Errorf("egress: dial %s %s: %w", network, target, err)
	}
	if len(local) > 0 {
		if err := consentOf(ctx)(ctx, target, local); err != nil {
			err = fmt.Errorf("%w; %w", g.permit(local[0], port), err)
			g.log.Warn("egress: connection refused", "network", network, "target", target, "address", local[0], "reason", err)
			return nil, fmt.Errorf("egress: dial %s %s: %w", network, target, err)
		}
		g.log.Info("egress: local addresses reached with the person's consent", "network", network, "target", target, "addresses", local)
		ctx = withConsented(ctx, local, port)
	}
	var errs []error
	for _, ip := range addrs {
		conn, err := g.dial(ctx, network, netip.AddrPortFrom(ip.Unmap(), port).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("egress: dial %s %s: %w", network, target, errors.Join(errs...))
}

// resolve returns the addresses to try: the literal itself, or the resolver's
// answer restricted to the network's family.
func (g *guard) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	family := map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}[network]
	if family == "" {
		return nil, fmt.Errorf("network %q is not tcp, tcp4 or tcp6: %w", network, ErrInvalidAddress)
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		found, err := g.resolver.LookupNetIP(ctx, family, host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		addrs = found
	}
	var out []netip.Addr
	for _, ip := range addrs {
		// Some resolvers answer A records in IPv4-mapped form; they count as
		// IPv4 and are dialled unmapped, but checked as given.
		is4 := ip.Unmap().Is4()
		if (family == "ip4" && !is4) || (family == "ip6" && is4) {
			continue
		}
		out = append(out, ip)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no %s address: %w", host, family, ErrInvalidAddress)
	}
	return out, nil
}
