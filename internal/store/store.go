package store

import (
	"crypto/cipher"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DefaultTimeout is how long an operation waits for the file lock while
// another process holds it, before giving up with ErrInUse.
const DefaultTimeout = 5 * time.Second

// formatVersion is the bucket layout this code reads and writes (doc.go).
const formatVersion = "1"

var (
	bucketMeta    = []byte("meta")
	bucketKV      = []byte("kv")
	bucketConfig  = []byte("config")
	bucketSecrets = []byte("secrets")
	keyFormat     = []byte("format")
)

// Options tune Open. The zero value is usable.
type Options struct {
	// Timeout bounds each wait for the file lock (Open's and every
	// operation's) while another process holds it; 0 means DefaultTimeout.
	Timeout time.Duration
	// KeyFile is the secrets key; "" means secrets.key beside the database.
	KeyFile string
}

// Store is the state database. It is safe for concurrent use, and by
// several processes at once: the file is open (and its lock held) only
// while operations need it (lease.go).
type Store struct {
	path    string
	keyFile string
	timeout time.Duration

	keyMu sync.Mutex
	aead  cipher.AEAD // nil until the first secret operation loads the key

	volatile volatileKV // KV keys starting with '~', never on disk (volatile.go)

	mu         sync.Mutex
	idle       *sync.Cond  // signalled when users drops to 0; uses mu
	db         *bolt.DB    // open while users > 0 or lingering, nil otherwise
	openedAt   time.Time   // when db was opened: its tenure (lease.go)
	yieldUntil time.Time   // after a tenure, no reopening before this
	lingering  *time.Timer // closes the file after idleLinger without users
	users      int         // operations between acquire and release
	writers    int         // of those, writes (commit.go)
	closed     bool
	releaseErr error // the first failure to close the file, for Close
}

// Open checks (creating it 0600 if needed) the database at path and returns
// a Store over it. If another process holds the file for longer than
// opts.Timeout, Open fails with an error wrapping ErrInUse that names the
// file and, where the OS tells, the holder. Open does not keep the file
// open: operations take the lock while they run, and briefly after
// (lease.go).
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.KeyFile == "" {
		opts.KeyFile = filepath.Join(filepath.Dir(path), "secrets.key")
	}
	s := &Store{path: path, keyFile: opts.KeyFile, timeout: opts.Timeout}
	s.idle = sync.NewCond(&s.mu)
	db, err := s.acquire()
	if err != nil {
		return nil, fmt.Errorf("store: open %w", err)
	}
	err = db.Update(initLayout)
	s.release()
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
}

// initLayout creates the top-level buckets of a new file and refuses a file
// written by an incompatible layout.
func initLayout(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	switch v := meta.Get(keyFormat); {
	case v == nil:
		if err := meta.Put(keyFormat, []byte(formatVersion)); err != nil {
			return err
		}
	case string(v) != formatVersion:
		return fmt.Errorf("database format %q is not the supported format %q", v, formatVersion)
	}
	for _, name := range [][]byte{bucketKV, bucketConfig, bucketSecrets} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close waits for operations in flight, forgets the secrets key and every
// volatile KV key, and returns the first error met closing the file since Open (a write that
// returned nil was committed before that error). Operations after Close
// fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for s.users > 0 {
		s.idle.Wait()
	}
	if s.lingering != nil {
		s.lingering.Stop()
		s.lingering = nil
	}
	s.closeFile()
	err := s.releaseErr
	s.mu.Unlock()

	s.keyMu.Lock()
	s.aead = nil
	s.keyMu.Unlock()
	s.volatile.close()
	return err
}
