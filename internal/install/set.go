package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/store"
)

// Set is several capsules staged under one hold of the install lock and
// installed all or nothing (a distro): Commit either puts every one of
// them in place with its grants approved, or leaves the capsules
// directory and the approval records as they were.
type Set struct {
	// Staged are the capsules in the order given; each is checked as
	// Stage checks one (the caller reports each one's diagnostics).
	Staged []*Staged

	opts Options
	lock *dirLock
	done bool
	// beforePlace, when set (tests), runs before the i-th capsule is
	// put in place; an error there is a failure midway.
	beforePlace func(i int) error
}

// StageSet stages every source of srcs (each as Stage takes it) under
// one hold of the install lock. Two sources naming the same capsule, or
// two capsules providing the same tool, are refused (each is checked
// against what is installed, not against the rest of the set, and the
// runtime would load only one of them). On success the caller must
// Commit or Abort.
func StageSet(opts Options, srcs ...[]string) (_ *Set, err error) {
	lock, err := lockCapsules(opts)
	if err != nil {
		return nil, err
	}
	set := &Set{opts: opts, lock: lock}
	defer func() {
		if err != nil {
			set.Abort()
		}
	}()
	seen := map[string]string{}
	tools := map[string]*Staged{} // tool → the set's capsule that provides it
	for _, src := range srcs {
		s, err := stageLocked(opts, src)
		if err != nil {
			return nil, err
		}
		set.Staged = append(set.Staged, s)
		if s.Manifest == nil {
			continue
		}
		if other, dup := seen[s.Manifest.ID()]; dup {
			return nil, fmt.Errorf("install: %s and %s are both capsule %s", other, s.Source, s.Manifest.ID())
		}
		seen[s.Manifest.ID()] = s.Source
		for _, t := range s.Manifest.ProvidedTools() {
			if other, dup := tools[t]; dup {
				return nil, fmt.Errorf("install: capsules %s (%s) and %s (%s) both provide tool %s; a tool keeps one provider: rename it in one of them (%w)",
					other.Manifest.ID(), other.Source, s.Manifest.ID(), s.Source, t, ErrToolTaken)
			}
			tools[t] = s
		}
	}
	return set, nil
}

// Abort deletes every staging directory and releases the lock; after
// Commit it does nothing.
func (set *Set) Abort() {
	if set == nil || set.done {
		return
	}
	set.done = true
	for _, s := range set.Staged {
		s.Abort()
	}
	set.lock.unlock()
}

// placed is what Commit did for one capsule, so that it can be undone.
type placed struct {
	s        *Staged
	prev     []byte // the approval record before (nil: none)
	approved bool
	moved    bool // in place at Target
	replaced bool // the old install is at s.Dir
}

// Commit approves and places every staged capsule in order. Should any
// step fail, what was done is undone in reverse (each placed capsule
// swapped back or moved out, each approval record restored or revoked)
// and the error says so; only when all are in place are the replaced
// installs deleted.
func (set *Set) Commit(st *store.Store) (err error) {
	if set.done {
		return errors.New("install: commit: already committed or aborted")
	}
	defer set.Abort()
	for _, s := range set.Staged {
		if s.Manifest == nil || s.Diagnostics.Err(false) != nil {
			return fmt.Errorf("install %s: the manifest has errors; nothing was installed", s.Source)
		}
	}
	book := grants.NewBook(st)
	var done []*placed
	defer func() {
		if err == nil {
			return
		}
		if uerr := undo(book, st, done); uerr != nil {
			err = fmt.Errorf("%w; undoing it failed too: %w", err, uerr)
		} else {
			err = fmt.Errorf("%w; nothing was installed (the %d capsules placed before it were put back)", err, len(done))
		}
	}()
	for i, s := range set.Staged {
		id := s.Manifest.ID()
		p := &placed{s: s}
		prev, had, err := st.Approvals().Get(id)
		if err != nil {
			return fmt.Errorf("install %s: %w", id, err)
		}
		if had {
			p.prev = prev
		}
		done = append(done, p)
		if err := book.Approve(s.Manifest); err != nil {
			return fmt.Errorf("install %s: %w", id, err)
		}
		p.approved = true
		if set.beforePlace != nil {
			if err := set.beforePlace(i); err != nil {
				return fmt.Errorf("install %s: %w", id, err)
			}
		}
		if err := p.place(); err != nil {
			return fmt.Errorf("install %s: %w", id, err)
		}
	}
	// Every capsule is in place: the replaced installs go.
	var errs []error
	for _, p := range done {
		if p.replaced {
			if err := os.RemoveAll(p.s.Dir); err != nil {
				errs = append(errs, fmt.Errorf("installed, but the old install at %s was not deleted: %w", p.s.Dir, err))
			}
		}
		p.s.Dir = "" // installed (or deleted): Abort must not touch it
	}
	return errors.Join(errs...)
}

// place puts the staged directory at its target, keeping what was there
// at the staging path until the whole set is in.
func (p *placed) place() error {
	replaced, err := p.s.swapIn()
	if err != nil {
		return err
	}
	p.moved, p.replaced = true, replaced
	return syncDir(filepath.Dir(p.s.Target))
}

// undo reverses done, last first.
func undo(book *grants.Book, st *store.Store, done []*placed) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		p := done[i]
		id := p.s.Manifest.ID()
		if p.moved {
			var err error
			if p.replaced {
				err = exchange(p.s.Dir, p.s.Target)
			} else {
				err = os.Rename(p.s.Target, p.s.Dir)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("put %s back: %w", id, err))
			} else {
				_ = syncDir(filepath.Dir(p.s.Target))
			}
		}
		if p.approved {
			var err error
			if p.prev != nil {
				err = st.Approvals().Set(id, p.prev)
			} else {
				err = book.Revoke(id)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("restore the approval of %s: %w", id, err))
			}
		}
	}
	return errors.Join(errs...)
}
