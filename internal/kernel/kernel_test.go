package kernel

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/astrid-go/astrid/internal/config"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// bootTest boots a kernel on a fresh $ASTRID_HOME and workspace; extra
// builtins are loaded after the standard ones unless builtins is non-nil.
func bootTest(t testing.TB, builtins []Builtin) (*Kernel, string) {
	t.Helper()
	return bootTestConfig(t, builtins, config.Default())
}

// bootBench is bootTest for a benchmark: the per-(capsule, principal) rate
// limit (10 MiB/s by default) is raised, because a closed loop of tool calls
// on a fast path publishes more than that and the benchmark measures the
// round trip, not the limiter.
func bootBench(b *testing.B, builtins []Builtin, edit ...func(*Options)) (*Kernel, string) {
	b.Helper()
	cfg := config.Default()
	cfg.Limits.RateBytesPerSec = 1 << 40
	return bootTestConfig(b, builtins, cfg, edit...)
}

// bootTestConfig boots a kernel with cfg; edit changes the options first.
func bootTestConfig(t testing.TB, builtins []Builtin, cfg config.Config, edit ...func(*Options)) (*Kernel, string) {
	t.Helper()
	if builtins == nil {
		builtins = Builtins()
	}
	home := t.TempDir()
	ws := t.TempDir()
	// Resolve symlinks (macOS /var → /private/var) so path assertions hold.
	ws, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	opts := Options{Home: home, Workspace: ws, Config: cfg, Logger: logger, Builtins: builtins, Frontends: testFrontends()}
	for _, e := range edit {
		e(&opts)
	}
	k, err := Boot(context.Background(), opts)
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	t.Cleanup(k.Close)
	return k, ws
}

const testTimeout = 30 * time.Second
