package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// fixture mirrors upstream's gate tests (workspace /workspace, Astrid home
// /home/user/.astrid) with the install directory DESIGN §4a adds.
var fixture = Env{
	InstallDir: "/home/user/.astrid/capsules/fs",
	Workspace:  "/workspace",
	HomesDir:   "/home/user/.astrid/home",
}

func mustGate(t testing.TB, caps manifest.Capabilities) *Gate {
	t.Helper()
	g, err := New(caps, fixture)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

// wantDenied fails unless err is a denial by capability whose text holds
// every fragment.
func wantDenied(t *testing.T, err error, capability string, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("allowed, want %s denied", capability)
	}
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("error %v does not wrap ErrDenied", err)
	}
	var d *DeniedError
	if !errors.As(err, &d) || d.Capability != capability {
		t.Fatalf("error %v is not a %s denial", err, capability)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q lacks %q", err, f)
		}
	}
}
