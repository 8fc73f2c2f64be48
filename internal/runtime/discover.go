package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/astrid-go/astrid/manifest"
)

// Discover lists the capsules the kernel may run: the built-ins, in the
// order given, then every subdirectory of capsulesDir holding a
// Capsule.toml, by directory name. Nothing else is ever looked at (DESIGN
// §6: never a workspace). An installed capsule may not take a built-in's
// name, and of two installed capsules with one name the first directory
// wins; each refusal is a Problem, as is a manifest with errors. A missing
// capsulesDir is an empty one.
func Discover(builtins []Builtin, capsulesDir string) ([]*Candidate, []Problem, error) {
	var out []*Candidate
	var problems []Problem
	taken := map[string]string{} // id → who has it
	for i, b := range builtins {
		m, diags := manifest.Parse(b.Manifest, "Capsule.toml", "")
		if err := diags.Err(false); err != nil {
			// A built-in is part of the binary: a bad one is a bug, not an
			// operator's problem to skip.
			return nil, nil, fmt.Errorf("runtime: built-in capsule %d: %w", i, err)
		}
		if prev, dup := taken[m.ID()]; dup {
			return nil, nil, fmt.Errorf("runtime: built-in capsule %s is listed twice (%s)", m.ID(), prev)
		}
		taken[m.ID()] = "a built-in capsule"
		out = append(out, &Candidate{Manifest: m, Code: b.New})
	}
	if capsulesDir == "" {
		return out, problems, nil
	}
	dirs, err := capsuleDirs(capsulesDir)
	if err != nil {
		return nil, nil, fmt.Errorf("runtime: discover in %s: %w", capsulesDir, err)
	}
	for _, dir := range dirs {
		c, err := ReadCandidate(dir)
		if err != nil {
			problems = append(problems, Problem{ID: filepath.Base(dir), Dir: dir, Err: err})
			continue
		}
		if prev, dup := taken[c.ID()]; dup {
			problems = append(problems, Problem{ID: c.ID(), Dir: dir, Err: fmt.Errorf(
				"capsule %s in %s: the name is taken by %s; rename the package to install it", c.ID(), dir, prev)})
			continue
		}
		taken[c.ID()] = "the capsule in " + dir
		out = append(out, c)
	}
	return out, problems, nil
}

// capsuleDirs lists the subdirectories of root that hold a Capsule.toml,
// sorted by name.
func capsuleDirs(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		// Stat follows a symlinked capsule directory: the operator put it
		// there, which is an install like any other.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, manifest.FileName)); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, dir)
	}
	sort.Strings(out)
	return out, nil
}

// ReadCandidate reads the installed capsule in dir.
func ReadCandidate(dir string) (*Candidate, error) {
	m, diags := manifest.Load(dir)
	if err := diags.Err(false); err != nil {
		return nil, fmt.Errorf("capsule in %s: %w", dir, err)
	}
	return &Candidate{Manifest: m, Dir: m.Dir}, nil
}
