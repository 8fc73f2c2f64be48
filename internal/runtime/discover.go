package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/astrid-go/astrid/manifest"
)

// Discover lists the capsules the kernel may run: the built-ins, in the
// order given, then every subdirectory of capsulesDir holding a
// Capsule.toml, by directory name. Nothing else is ever looked at (DESIGN
// §6: never a workspace). An installed capsule may not take a built-in's
// name, and of installed capsules sharing a name only the one at
// capsules/<name> loads (settleNames); each refusal is a Problem, as is a
// manifest with errors. A missing
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
	dirs, broken, err := capsuleDirs(capsulesDir)
	if err != nil {
		return nil, nil, fmt.Errorf("runtime: discover in %s: %w", capsulesDir, err)
	}
	problems = append(problems, broken...)
	var installed []*Candidate
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
		installed = append(installed, c)
	}
	kept, refused := settleNames(installed)
	return append(out, kept...), append(problems, refused...), nil
}

// settleNames decides which of several installed directories holding
// capsules of one name gets the name (and with it the capsule's KV,
// secrets and configuration): the one installed where an install puts it,
// capsules/<name>. Directory order never decides, or a capsule newly
// installed in a directory that sorts first could take over an installed
// capsule's name and secrets. When none of them is at capsules/<name>, none
// loads, each naming the others, until the operator removes one.
func settleNames(installed []*Candidate) (kept []*Candidate, refused []Problem) {
	byID := map[string][]*Candidate{}
	for _, c := range installed {
		byID[c.ID()] = append(byID[c.ID()], c)
	}
	for _, c := range installed {
		rivals := byID[c.ID()]
		if len(rivals) == 1 {
			kept = append(kept, c)
			continue
		}
		var canonical *Candidate
		var dirs []string
		for _, r := range rivals {
			if filepath.Base(r.Dir) == r.ID() {
				canonical = r
			}
			if r != c {
				dirs = append(dirs, r.Dir)
			}
		}
		switch {
		case canonical == c:
			kept = append(kept, c)
		case canonical != nil:
			refused = append(refused, Problem{ID: c.ID(), Dir: c.Dir, Err: fmt.Errorf(
				"capsule %s in %s: the name is taken by the capsule installed at %s; rename the package to install it", c.ID(), c.Dir, canonical.Dir)})
		default:
			refused = append(refused, Problem{ID: c.ID(), Dir: c.Dir, Err: fmt.Errorf(
				"capsule %s in %s: %s holds a capsule of the same name, and neither is installed at capsules/%s; none of them loads until the others are removed (a capsule's name never goes by directory order)", c.ID(), c.Dir, strings.Join(dirs, ", "), c.ID())})
		}
	}
	return kept, refused
}

// capsuleDirs lists the subdirectories of root that hold a Capsule.toml,
// sorted by name. An entry that is a symlink leading nowhere (dangling, or a
// loop) is a Problem, not silently skipped: the operator installed
// something there and `capsule list` must say why it is not running.
func capsuleDirs(root string) ([]string, []Problem, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []string
	var broken []Problem
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			// Hidden entries are the installer's (a capsule being staged,
			// an old one being removed: internal/install), never a
			// capsule: no capsule id starts with a dot.
			continue
		}
		dir := filepath.Join(root, e.Name())
		// Stat follows a symlinked capsule directory: the operator put it
		// there, which is an install like any other (but see
		// checkInstallDir: never into the workspace).
		fi, err := os.Stat(dir)
		if err != nil {
			if e.Type()&fs.ModeSymlink != 0 {
				broken = append(broken, Problem{ID: e.Name(), Dir: dir, Err: brokenLink(dir, err)})
			}
			continue
		}
		if !fi.IsDir() {
			continue
		}
		// Anything named Capsule.toml makes a capsule directory; reading it
		// (ReadCandidate) refuses, and so reports, one that is not a
		// regular file inside the directory.
		if _, err := os.Lstat(filepath.Join(dir, manifest.FileName)); err != nil {
			continue
		}
		out = append(out, dir)
	}
	sort.Strings(out)
	return out, broken, nil
}

// brokenLink says why the symlink at dir leads to no directory.
func brokenLink(dir string, err error) error {
	target, _ := os.Readlink(dir)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("%s is a symlink loop (-> %s); remove it or point it at a capsule directory", dir, target)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s is a dangling symlink (-> %s, which does not exist); remove it or reinstall the capsule", dir, target)
	}
	return fmt.Errorf("%s is a symlink that cannot be followed (-> %s): %w", dir, target, err)
}

// checkInstallDir refuses an installed capsule whose directory resolves
// into the workspace (DESIGN §6: capsules are never discovered from a
// workspace an agent was pointed at). Code there is what an agent with a
// workspace write grant can rewrite, so loading it would let the agent
// choose the kernel's capsules.
func checkInstallDir(dir, workspace string) error {
	if workspace == "" {
		return nil
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("resolve capsule directory %s: %w", dir, err)
	}
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		ws = workspace
	}
	if rel, err := filepath.Rel(ws, real); err == nil && filepath.IsLocal(rel) || real == ws {
		return fmt.Errorf("capsule directory %s resolves to %s, inside the workspace %s: a capsule is never loaded from the workspace (an agent may write there); install it under $ASTRID_HOME/capsules, or run astrid from another directory", dir, real, ws)
	}
	return nil
}

// ReadCandidate reads the installed capsule in dir.
func ReadCandidate(dir string) (*Candidate, error) {
	m, diags := manifest.Load(dir)
	if err := diags.Err(false); err != nil {
		return nil, fmt.Errorf("capsule in %s: %w", dir, err)
	}
	return &Candidate{Manifest: m, Dir: m.Dir}, nil
}
