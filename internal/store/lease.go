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
// a hundred reads (docs/rationale/store.md).
//
// A busy process would still keep the file for as long as it stays busy,
// and a flock has no queue: another process only finds it free if it
// happens to try in a gap. So a Store that has held the file for maxTenure
// lets go as soon as its operations in flight end, and pauses yieldPause
// before taking it again; waiters try every lockPollMax at most, so one of
// them gets the file in that pause.

const (
	// idleLinger is how long the file stays open after the last operation.
	idleLinger = 5 * time.Millisecond
	// maxTenure is how long a Store keeps the file while busy before it
	// gives others a turn.
	maxTenure = 250 * time.Millisecond
	// yieldPause is how long a Store that gave up the file for its
	// tenure waits before reopening it.
	yieldPause = 3 * time.Millisecond
	// lockPollMin and lockPollMax bound the wait between two tries of a
	// lock held elsewhere; lockPollMax is below yieldPause, so a waiter
	// tries at least once in another Store's pause.
	lockPollMin = 250 * time.Microsecond
	lockPollMax = time.Millisecond
)

// acquire opens the file unless this process already has it open, waiting
// up to s.timeout for another process's lock, and counts one more user.
// Every successful acquire is paired with a release.
func (s *Store) acquire() (*bolt.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Past its tenure, the open file takes no new users: it closes when
	// those in flight are done (release), and this one reopens it after
	// the pause.
	for s.db != nil && s.users > 0 && time.Since(s.openedAt) >= maxTenure {
		s.idle.Wait()
	}
	if s.closed {
		return nil, fmt.Errorf("%s: %w", s.path, ErrClosed)
	}
	if s.lingering != nil {
		s.lingering.Stop()
		s.lingering = nil
	}
	if s.db == nil {
		time.Sleep(time.Until(s.yieldUntil))
		db, err := s.open()
		if err != nil {
			return nil, err
		}
		s.db, s.openedAt = db, time.Now()
	}
	s.users++
	return s.db, nil
}

// open opens the file, trying its lock again (with a growing pause, up to
// lockPollMax) until s.timeout has passed. It polls itself rather than
// letting bbolt wait, because bbolt retries only every 50 ms, which would
// miss another Store's yieldPause. s.mu must be held.
func (s *Store) open() (*bolt.DB, error) {
	deadline := time.Now().Add(s.timeout)
	pause := lockPollMin
	for {
		// A timeout below bbolt's own retry interval makes it try once.
		db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: time.Nanosecond})
		switch {
		case err == nil:
			db.MaxBatchDelay = batchDelay
			return db, nil
		case !errors.Is(err, berrors.ErrTimeout):
			return nil, fmt.Errorf("%s: %w", s.path, err)
		case time.Now().Add(pause).After(deadline):
			return nil, fmt.Errorf("%s: %s for longer than %s: %w", s.path, lockHolder(s.path), s.timeout, ErrInUse)
		}
		time.Sleep(pause)
		pause = min(2*pause, lockPollMax)
	}
}

// release ends one user's lease. When it was the last, the file is closed
// (releasing its lock) at once if its tenure is over, else idleLinger later
// unless another operation comes.
func (s *Store) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users--
	if s.users > 0 {
		return
	}
	s.idle.Broadcast()
	switch {
	case s.closed:
		s.closeFile()
		return
	case time.Since(s.openedAt) >= maxTenure:
		s.closeFile()
		s.yieldUntil = time.Now().Add(yieldPause)
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
