package egress

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"time"
)

// Resolver turns a host name into addresses. *net.Resolver satisfies it;
// tests inject a fake so that no query ever leaves the machine.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc makes the final connection to an "ip:port" address that has
// already been checked. It is never handed a host name.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Defaults for Options.Timeout (see there).
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	// MaxRedirects is how many redirect hops the HTTP client follows.
	MaxRedirects = 10
)

// Options configure a Dialer or an HTTP client.
type Options struct {
	// Resolver looks up host names; default net.DefaultResolver.
	Resolver Resolver
	// Dial makes the final connection to a checked "ip:port"; default a
	// net.Dialer whose Control checks the socket address once more.
	Dial DialFunc
	// AllowLocal lists the operator's local endpoints that may be reached
	// although CheckAddr refuses them: "127.0.0.1:11434", "localhost:8080",
	// "[::1]:9000", "10.0.0.5:*", or a CIDR prefix "10.1.2.0/24" (any port).
	// It is matched on the (IP, port) actually connected. Empty by default.
	AllowLocal []string
	// CheckHost is the `net` gate, called with the normalised host of every
	// HTTP request and redirect hop. Required by NewClient.
	CheckHost func(host string) error
	// CheckConn is the `net_connect` gate, called with the normalised host
	// and the port of every raw TCP dial. Required by NewDialer.
	CheckConn func(host string, port int) error
	// Timeout bounds a Dialer's connect (default DefaultConnectTimeout) and a
	// client's whole request, redirects and body included (default
	// DefaultRequestTimeout). The client's connects are bounded by
	// DefaultConnectTimeout as well.
	Timeout time.Duration
	// Logger receives one warning per refused connection; default
	// slog.Default().
	Logger *slog.Logger
}
