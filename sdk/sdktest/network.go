package sdktest

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/egress"
)

// Network is the operator's side of the capsules' egress, for testing a
// capsule that fetches: which local endpoints may be reached despite the
// SSRF guard, and how long a request may take.
type Network struct {
	// Allow are config.toml's [egress] allow entries ("127.0.0.1:8080",
	// "localhost:*", a CIDR prefix), typically a test server's address.
	Allow []string
	// RequestTimeout bounds each whole HTTP request of HTTPDo, the
	// egress client's limit (egress.DefaultRequestTimeout when zero), so a
	// test of a slow server need not wait the default.
	RequestTimeout time.Duration
	// Resolver answers the capsules' DNS lookups instead of the system's
	// (nil: the system's), so a test can name hosts whose answers it
	// chooses: a name that resolves to loopback or a metadata address.
	Resolver Resolver
}

// Resolver looks up a host's addresses (net.Resolver's LookupNetIP).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// NewWithNetwork is New with the operator's egress settings n. Everything
// else of the egress client (the `net` gate on every hop, the SSRF guard
// on the address actually connected, no proxy) is the kernel's own.
func NewWithNetwork(t testing.TB, n Network, capsules ...Capsule) *Kernel {
	t.Helper()
	for _, entry := range n.Allow {
		if err := egress.CheckAllowLocal(entry); err != nil {
			t.Fatalf("sdktest: network allow %q: %v", entry, err)
		}
	}
	cfg := testConfig()
	cfg.Egress.Allow = append([]string(nil), n.Allow...)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bootNet(t, cfg, &egress.Options{AllowLocal: cfg.Egress.Allow, Timeout: n.RequestTimeout, Resolver: n.Resolver}, t.TempDir(), ws, capsules)
}
