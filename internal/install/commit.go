package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/store"
)

// Commit installs the staged capsule: it records its grants as approved
// (the caller has shown them and has the operator's confirmation), then
// puts the staged directory at capsules/<id> in one step — swapping it with
// an existing install, which is then deleted — and releases the lock.
//
// The record is written first: a crash after it leaves the old files under
// a record that may be narrower (the old capsule then waits for approval)
// or wider than what they ask, never files that load beyond what the
// operator approved.
func (s *Staged) Commit(st *store.Store) error {
	if s.done {
		return errors.New("install: commit: already committed or aborted")
	}
	defer s.Abort()
	if s.Manifest == nil || s.Diagnostics.Err(false) != nil {
		return fmt.Errorf("install %s: the manifest has errors; it is not installed", s.Source)
	}
	if err := grants.NewBook(st).Approve(s.Manifest); err != nil {
		return fmt.Errorf("install %s: %w", s.Manifest.ID(), err)
	}
	if err := s.place(); err != nil {
		return fmt.Errorf("install %s: %w", s.Manifest.ID(), err)
	}
	s.Dir = "" // installed: Abort must not delete it
	return nil
}

// place renames the staging directory to the target, swapping it with
// what is there; what was there ends up at the staging path and is
// deleted.
func (s *Staged) place() error {
	replaced, err := s.swapIn()
	if err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(s.Target)); err != nil || !replaced {
		return err
	}
	// The old install is now at the staging path, hidden; if deleting it
	// fails or is cut short, the next install or remove finishes it.
	if err := os.RemoveAll(s.Dir); err != nil {
		return fmt.Errorf("installed, but the old install at %s was not deleted: %w", s.Dir, err)
	}
	return nil
}

// swapIn renames the staging directory to the target, or swaps the two
// in one step when something is there (which is then at the staging
// path); replaced says which. The caller makes it durable (syncDir).
func (s *Staged) swapIn() (replaced bool, err error) {
	_, err = os.Lstat(s.Target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.Rename(s.Dir, s.Target); err != nil {
			return false, err
		}
	case err != nil:
		return false, err
	default:
		if err := exchange(s.Dir, s.Target); err != nil {
			return false, err
		}
		replaced = true
	}
	return replaced, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
