package sdktest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/config"
	capsuleinstall "github.com/astrid-go/astrid/internal/install"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

// install installs a capsule without code into home's capsules directory
// as `astrid capsule install --yes` does (internal/install: staged,
// checked, its grants recorded as approved, renamed into place), from a
// source directory holding its Capsule.toml and its Files.
func install(home string, c Capsule) error {
	m, diags := manifest.Parse(c.Manifest, manifest.FileName, "")
	if m == nil || diags.HasErrors() {
		return fmt.Errorf("manifest does not parse: %v", diags)
	}
	src, err := os.MkdirTemp("", "sdktest-capsule-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	if err := os.WriteFile(filepath.Join(src, manifest.FileName), c.Manifest, 0o600); err != nil {
		return err
	}
	for name, text := range c.Files {
		path := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return fmt.Errorf("capsule %s: %s: %w", m.ID(), name, err)
		}
	}
	return Install(home, src)
}

// Install installs the capsule in directory src into home ($ASTRID_HOME)
// and approves its grants, as an operator running `astrid capsule install
// src --yes` would; a test that boots a kernel on home then loads it.
func Install(home, src string) error {
	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	staged, err := capsuleinstall.Stage(capsuleinstall.Options{Home: home}, src)
	if err != nil {
		return err
	}
	defer staged.Abort()
	if err := staged.Diagnostics.Err(false); err != nil {
		return fmt.Errorf("capsule in %s: %w", src, err)
	}
	return staged.Commit(st)
}
