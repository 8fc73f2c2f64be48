package kernel

import (
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

// approveInstalled records the grants of the capsule a test copied into
// home's capsules/dir as approved, as an operator's `astrid capsule
// approve` would: without it the kernel does not load it.
func approveInstalled(t testing.TB, home, dir string) {
	t.Helper()
	m, diags := manifest.Load(filepath.Join(config.Layout(home).Capsules, dir))
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := grants.NewBook(st).Approve(m); err != nil {
		t.Fatal(err)
	}
}
