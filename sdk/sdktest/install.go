package sdktest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/manifest"
)

// install writes a capsule without code into home's capsules directory, as
// `astrid capsule install` leaves one: its Capsule.toml and its Files.
func install(home string, c Capsule) error {
	m, diags := manifest.Parse(c.Manifest, manifest.FileName, "")
	if m == nil || diags.HasErrors() {
		return fmt.Errorf("manifest does not parse: %v", diags)
	}
	dir := filepath.Join(config.Layout(home).Capsules, m.ID())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, manifest.FileName), c.Manifest, 0o600); err != nil {
		return err
	}
	for name, text := range c.Files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return fmt.Errorf("capsule %s: %s: %w", m.ID(), name, err)
		}
	}
	return nil
}
