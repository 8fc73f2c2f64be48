package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/astrid-go/astrid/internal/engine/wasm"
	"github.com/astrid-go/astrid/manifest"
)

// Staging and removal directories in capsules/ start with these (hidden:
// the runtime never takes them for capsules).
const (
	stagingPrefix = ".install-"
	removalPrefix = ".remove-"
)

// Staged is a capsule copied into its staging directory and checked there:
// what Commit installs is exactly what was checked and shown.
type Staged struct {
	// Manifest is the staged copy's manifest; Diagnostics its problems
	// (Commit refuses one with errors; the caller shows them).
	Manifest    *manifest.Manifest
	Diagnostics manifest.Diagnostics
	// Dir is the staging directory (the manifest's Dir).
	Dir string
	// Source is what was installed from, as given.
	Source string
	// Target is where it goes: capsules/<id>.
	Target string
	// Replaces is whether something is installed at Target now.
	Replaces bool

	opts Options
	lock *dirLock
	done bool
}

// Stage copies the capsule at src into a staging directory of the
// capsules directory and checks it: its manifest, its name (not reserved)
// and its wasm component's integrity (the loader's own check: the hashes
// of [[component]] and meta.json). src is a capsule directory (or its
// Capsule.toml), or a .wasm file and a Capsule.toml. It takes the install
// lock and first deletes what a crashed install or remove left behind.
// On success the caller must Commit or Abort.
func Stage(opts Options, src ...string) (_ *Staged, err error) {
	lock, err := lockCapsules(opts)
	if err != nil {
		return nil, err
	}
	s, err := stageLocked(opts, src)
	if err != nil {
		lock.unlock()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// stageLocked stages src while the caller holds the install lock (the
// returned Staged holds none of its own).
func stageLocked(opts Options, src []string) (_ *Staged, err error) {
	caps := opts.capsulesDir()
	s := &Staged{opts: opts, Source: strings.Join(src, " + ")}
	defer func() {
		if err != nil {
			s.Abort()
		}
	}()
	s.Dir, err = os.MkdirTemp(caps, stagingPrefix)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	c := &copier{opts: opts}
	if err := c.source(src, s.Dir, caps); err != nil {
		return nil, fmt.Errorf("install %s: %w", s.Source, err)
	}
	if err := c.checkLinks(s.Dir); err != nil {
		return nil, fmt.Errorf("install %s: %w", s.Source, err)
	}
	s.Manifest, s.Diagnostics = manifest.Load(s.Dir)
	if s.Manifest == nil || s.Diagnostics.Err(false) != nil {
		// The caller reports the diagnostics; Commit refuses.
		return s, nil
	}
	id := s.Manifest.ID()
	if err := opts.checkID(id, "install over"); err != nil {
		return nil, err
	}
	if err := checkTools(opts, s.Manifest); err != nil {
		return nil, err
	}
	for i := range s.Manifest.Components {
		// Every component, as the loader reads each.
		if _, err := wasm.CheckComponentFile(s.Manifest, &s.Manifest.Components[i], opts.MaxComponentBytes); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("%w (build it first: astrid capsule build)", err)
			}
			return nil, fmt.Errorf("install %s: %w", s.Source, err)
		}
	}
	s.Target = opts.target(id)
	if _, err := os.Lstat(s.Target); err == nil {
		s.Replaces = true
	}
	return s, nil
}

// source copies what src names into dst.
func (c *copier) source(src []string, dst, caps string) error {
	switch len(src) {
	case 1:
		dir := src[0]
		if filepath.Base(dir) == manifest.FileName {
			dir = filepath.Dir(dir)
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is not a capsule directory (give the directory holding Capsule.toml, or a .wasm file and its Capsule.toml)", src[0])
		}
		if fi, err := os.Lstat(filepath.Join(real, manifest.FileName)); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("%s holds no Capsule.toml", src[0])
		}
		// Copying a directory that holds the capsules directory would
		// copy the staging directory into itself.
		if realCaps, err := filepath.EvalSymlinks(caps); err == nil {
			if rel, err := filepath.Rel(real, realCaps); err == nil && (filepath.IsLocal(rel) || rel == ".") {
				return fmt.Errorf("%s holds the capsules directory %s; give the capsule's own directory", src[0], caps)
			}
		}
		return c.tree(real, dst)
	case 2:
		return c.wasmAndManifest(src, dst)
	}
	return fmt.Errorf("give a capsule directory, or a .wasm file and its Capsule.toml (got %d arguments)", len(src))
}

// wasmAndManifest stages a built module and its manifest given as files:
// Capsule.toml at the top, the module where the manifest's executable
// component names it, and meta.json (the build's record of the module's
// hash) from beside the module or else beside the manifest.
func (c *copier) wasmAndManifest(src []string, dst string) error {
	wasmFile, toml := src[0], src[1]
	if strings.HasSuffix(toml, ".wasm") {
		wasmFile, toml = toml, wasmFile
	}
	if !strings.HasSuffix(wasmFile, ".wasm") {
		return fmt.Errorf("of two arguments, one must be the .wasm file and the other its Capsule.toml")
	}
	data, err := os.ReadFile(toml)
	if err != nil {
		return err
	}
	m, _ := manifest.Parse(data, manifest.FileName, "")
	if m == nil || m.ExecutableComponent() == nil {
		return fmt.Errorf("%s declares no executable [[component]] for %s", toml, wasmFile)
	}
	if len(m.Components) > 1 {
		return fmt.Errorf("%s declares %d [[component]]s; install the capsule's directory, which holds them all, not one .wasm file", toml, len(m.Components))
	}
	name := filepath.FromSlash(m.ExecutableComponent().File)
	if !filepath.IsLocal(name) {
		return fmt.Errorf("%s: the component file %q is not a path inside the capsule", toml, m.ExecutableComponent().File)
	}
	if err := c.copyFile(toml, filepath.Join(dst, manifest.FileName)); err != nil {
		return err
	}
	if err := c.copyFile(wasmFile, filepath.Join(dst, name)); err != nil {
		return err
	}
	for _, meta := range []string{filepath.Join(filepath.Dir(wasmFile), "meta.json"), filepath.Join(filepath.Dir(toml), "meta.json")} {
		if _, err := os.Stat(meta); err == nil {
			return c.copyFile(meta, filepath.Join(dst, "meta.json"))
		}
	}
	return nil
}

// lockCapsules creates the capsules directory if need be, takes its
// install lock, and deletes what a crashed install or remove left there.
func lockCapsules(opts Options) (*dirLock, error) {
	caps := opts.capsulesDir()
	if err := os.MkdirAll(caps, 0o700); err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	lock, err := lockDir(caps, opts.lockWait())
	if err != nil {
		return nil, err
	}
	if err := cleanLeftovers(caps); err != nil {
		lock.unlock()
		return nil, err
	}
	return lock, nil
}

// cleanLeftovers deletes the staging and removal directories a crashed
// install or remove left in caps; the caller holds the lock, so none is in
// use.
func cleanLeftovers(caps string) error {
	entries, err := os.ReadDir(caps)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPrefix) || strings.HasPrefix(e.Name(), removalPrefix) {
			if err := os.RemoveAll(filepath.Join(caps, e.Name())); err != nil {
				return fmt.Errorf("install: delete what a crashed install left: %w", err)
			}
		}
	}
	return nil
}

// Abort deletes the staging directory and releases the lock; after Commit
// it does nothing.
func (s *Staged) Abort() {
	if s == nil || s.done {
		return
	}
	s.done = true
	if s.Dir != "" {
		_ = os.RemoveAll(s.Dir)
	}
	s.lock.unlock()
}
