package store

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The file is opened when an operation needs it and closed once no
// operation in this process has needed it for idleLinger, because bbolt
// holds its file lock for as long as the file is open: a Store that kept it
// open would shut every other astrid process on the same $ASTRID_HOME out
// for its whole lifetime. Operations that overlap in one process share one
// open file (and writes one commit, commit.go); the linger lets a burst of
// operations share it too, since opening and closing costs about as much as
// a hundred reads (docs/RATIONALE.md).

// idleLinger is how long the file stays open after the last operation.
const idleLinger = 5 * time.Millisecond

// acquire opens the file unless this process already has it open, waiting
// up to s.timeout for another process's lock, and counts one more user.
// Every successful acquire is paired with a release.
func (s *Store) acquire() (*bolt.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("%s: %w", s.path, ErrClosed)
	}
	if s.lingering != nil {
		s.lingering.Stop()
		s.lingering = nil
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

// release ends one user's lease; when it was the last, the file is closed
// (releasing its lock) idleLinger later unless another operation comes.
func (s *Store) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users--
	if s.users > 0 {
		return
	}
	s.idle.Broadcast()
	if s.closed {
		s.closeFile()
		return
	}
	var t *time.Timer
	t = time.AfterFunc(idleLinger, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.lingering == t { // not stopped and replaced meanwhile
			s.lingering = nil
			s.closeFile()
		}
	})
	s.lingering = t
}

// closeFile closes the open file, if any. A failure to close does not undo
// what operations committed, so they do not report it as theirs: it is
// logged and kept for Close. s.mu must be held and s.users be 0.
func (s *Store) closeFile() {
	db := s.db
	if db == nil {
		return
	}
	s.db = nil
	if err := closeDB(db); err != nil {
		err = fmt.Errorf("store: close %s: %w", s.path, err)
		slog.Error("store: releasing the database file failed", "err", err)
		if s.releaseErr == nil {
			s.releaseErr = err
		}
	}
}

// closeDB is bbolt's Close; a test replaces it to see a failure reach Close.
var closeDB = (*bolt.DB).Close

// view runs a read-only transaction under a lease.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	db, err := s.acquire()
	if err != nil {
		return err
	}
	defer s.release()
	return db.View(fn)
}
