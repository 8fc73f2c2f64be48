package store

import (
	"errors"
	"fmt"
	"log/slog"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The file is opened when an operation needs it and closed as soon as no
// operation in this process does, because bbolt holds its file lock for as
// long as the file is open: a Store that kept it open would shut every other
// astrid process on the same $ASTRID_HOME out for its whole lifetime.
// Operations that overlap in one process share one open file (and writes
// one commit, commit.go); docs/RATIONALE.md gives the cost of reopening.

// acquire opens the file unless this process already has it open, waiting
// up to s.timeout for another process's lock, and counts one more user.
// Every successful acquire is paired with a release.
func (s *Store) acquire() (*bolt.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("%s: %w", s.path, ErrClosed)
	}
	if s.db == nil {
		db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: s.timeout})
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("%s: %s for longer than %s: %w", s.path, lockHolder(s.path), s.timeout, ErrInUse)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		db.MaxBatchDelay = batchDelay
		s.db = db
	}
	s.users++
	return s.db, nil
}

// release ends one user's lease and closes the file (releasing its lock)
// when it was the last. A failure to close does not undo what the
// operation committed, so operations do not report it as theirs: it is
// logged, kept for Close, and returned for Open.
func (s *Store) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users--
	if s.users > 0 {
		return nil
	}
	defer s.idle.Broadcast()
	db := s.db
	s.db = nil
	if err := closeDB(db); err != nil {
		err = fmt.Errorf("store: close %s: %w", s.path, err)
		slog.Error("store: releasing the database file failed", "err", err)
		if s.releaseErr == nil {
			s.releaseErr = err
		}
		return err
	}
	return nil
}

// closeDB is bbolt's Close; a test replaces it to see a failure reach Close.
var closeDB = (*bolt.DB).Close

// view runs a read-only transaction under a lease.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	db, err := s.acquire()
	if err != nil {
		return err
	}
	err = db.View(fn)
	_ = s.release() // logged and kept for Close
	return err
}
