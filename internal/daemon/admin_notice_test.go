package daemon

import (
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/sandbox"
)

// The web view warns while processes run unconfined, and is silent while
// they are confined.
func TestSandboxNotice(t *testing.T) {
	if n := kernel.SandboxNotice(config.Sandbox{Mode: config.SandboxOff}); !strings.Contains(n, "OFF") || !strings.Contains(n, "unconfined") {
		t.Fatalf("mode off: notice %q", n)
	}
	n := kernel.SandboxNotice(config.Sandbox{Mode: config.SandboxEnforce})
	if err := sandbox.Need(sandbox.ABI()); err != nil {
		if !strings.Contains(n, "cannot confine") {
			t.Fatalf("enforce on a kernel that cannot: notice %q", n)
		}
		return
	}
	if n != "" {
		t.Fatalf("enforce: notice %q", n)
	}
}
