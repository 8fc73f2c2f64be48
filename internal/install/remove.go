package install

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/store"
)

// Removed says what Remove deleted.
type Removed struct {
	Dirs   []string // the capsule directories deleted
	Purged bool     // its KV, config and secrets were deleted too
}

// Remove deletes installed capsule id: its approval record first (so that
// nothing of it loads again even if deleting its files is cut short), then
// every directory of the capsules directory holding it (capsules/<id>, and
// any other whose manifest names id), each renamed aside and then deleted.
// With purge it also deletes its KV for every principal, its config values
// and its secrets. A running kernel unloads it when it sees the directory
// gone (the watcher) or is told to.
func Remove(opts Options, st *store.Store, id string, purge bool) (Removed, error) {
	var out Removed
	if err := opts.checkID(id, "remove"); err != nil {
		return out, err
	}
	caps := opts.capsulesDir()
	lock, err := lockCapsules(opts)
	if err != nil {
		return out, err
	}
	defer lock.unlock()
	dirs, err := dirsOf(opts, id)
	if err != nil {
		return out, err
	}
	_, approved, err := grants.NewBook(st).Approved(id)
	if err != nil {
		approved = true // unreadable: delete it all the same
	}
	if len(dirs) == 0 && !approved && !purge {
		return out, fmt.Errorf("install: no capsule %s is installed in %s: %w", id, caps, ErrNotInstalled)
	}
	if err := grants.NewBook(st).Revoke(id); err != nil {
		return out, err
	}
	for _, dir := range dirs {
		aside, err := os.MkdirTemp(caps, removalPrefix)
		if err != nil {
			return out, fmt.Errorf("install: %w", err)
		}
		// Renamed into a fresh hidden directory, then deleted: a crash
		// in between leaves nothing that loads. A symlinked install moves
		// as the link; what it points to is not touched.
		if err := os.Rename(dir, filepath.Join(aside, "capsule")); err != nil {
			_ = os.Remove(aside)
			return out, fmt.Errorf("install: remove %s: %w", dir, err)
		}
		if err := os.RemoveAll(aside); err != nil {
			return out, fmt.Errorf("install: remove %s: %w", dir, err)
		}
		out.Dirs = append(out.Dirs, dir)
	}
	if err := syncDir(caps); err != nil {
		return out, fmt.Errorf("install: %w", err)
	}
	if purge {
		if err := st.Purge(id); err != nil {
			return out, fmt.Errorf("install: %w", err)
		}
		out.Purged = true
	}
	return out, nil
}

// dirsOf lists the directories of the capsules directory holding capsule
// id: capsules/<id> whatever it holds, and any other whose manifest names
// id.
func dirsOf(opts Options, id string) ([]string, error) {
	var dirs []string
	target := opts.target(id)
	if _, err := os.Lstat(target); err == nil {
		dirs = append(dirs, target)
	}
	cands, problems, err := runtime.Discover(nil, opts.capsulesDir())
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	for _, c := range cands {
		if c.ID() == id && c.Dir != target {
			dirs = append(dirs, c.Dir)
		}
	}
	for _, p := range problems {
		// Rivals for the name, refused by the runtime: theirs too.
		if p.ID == id && p.Dir != target && !slices.Contains(dirs, p.Dir) {
			dirs = append(dirs, p.Dir)
		}
	}
	return dirs, nil
}

// Find returns the installed capsule id, as the runtime would read it (for
// approve: its manifest and directory).
func Find(opts Options, id string) (*runtime.Candidate, error) {
	if err := opts.checkID(id, "approve"); err != nil {
		return nil, err
	}
	cands, problems, err := runtime.Discover(nil, opts.capsulesDir())
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	for _, c := range cands {
		if c.ID() == id {
			return c, nil
		}
	}
	for _, p := range problems {
		if p.ID == id {
			return nil, fmt.Errorf("install: capsule %s cannot be read: %w", id, p.Err)
		}
	}
	return nil, fmt.Errorf("install: no capsule %s is installed in %s: %w", id, opts.capsulesDir(), ErrNotInstalled)
}
