package store

import (
	"crypto/cipher"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultTimeout is how long Open waits for the file lock before giving up
// with ErrInUse.
const DefaultTimeout = time.Second

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
	// Timeout bounds the wait for the file lock; 0 means DefaultTimeout.
	Timeout time.Duration
	// KeyFile is the secrets key; "" means secrets.key beside the database.
	KeyFile string
	// SyncInterval is the group commit window: writes are committed at
	// once (readers see them, a crash of the process loses nothing) and
	// flushed to stable storage at most this long afterwards, so that a
	// write does not wait for the disk. 0 means DefaultSyncInterval; a
	// negative value flushes every write before it returns.
	SyncInterval time.Duration
}

// DefaultSyncInterval bounds what a power loss or OS crash can take back.
const DefaultSyncInterval = 100 * time.Millisecond

// Store is an open state database. It is safe for concurrent use.
type Store struct {
	db      *bolt.DB
	path    string
	keyFile string

	keyMu sync.Mutex
	aead  cipher.AEAD // nil until the first secret operation loads the key

	dirty   atomic.Bool
	stop    chan struct{}
	flushed sync.WaitGroup

	pmu      sync.Mutex
	pending  map[string]*pendingNS // buffered writes, by namespace
	flushing map[string]*pendingNS // the batch being written, still readable
	flushMu  sync.Mutex
}

// Open opens (creating it 0600 if needed) the database at path. If another
// opener holds the file, Open fails within opts.Timeout with an error
// wrapping ErrInUse that names the file and, where the OS tells, the holder.
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.KeyFile == "" {
		opts.KeyFile = filepath.Join(filepath.Dir(path), "secrets.key")
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.Timeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("store: open %s: %s: %w", path, lockHolder(path), ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.Update(initLayout); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, keyFile: opts.KeyFile, pending: map[string]*pendingNS{}}
	if opts.SyncInterval == 0 {
		opts.SyncInterval = DefaultSyncInterval
	}
	if opts.SyncInterval > 0 {
		db.NoSync = true
		s.stop = make(chan struct{})
		s.flushed.Add(1)
		go s.flushLoop(opts.SyncInterval)
	}
	return s, nil
}

// update runs a write transaction and marks the file for the next flush.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	err := s.db.Update(fn)
	if err == nil && s.db.NoSync {
		s.dirty.Store(true)
	}
	return err
}

// flushLoop is the group commit: one fsync per interval for all the writes
// made in it.
func (s *Store) flushLoop(interval time.Duration) {
	defer s.flushed.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.flush()
		}
	}
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

// Close releases the file lock and forgets the secrets key.
func (s *Store) Close() error {
	if s.stop != nil {
		select {
		case <-s.stop:
		default:
			close(s.stop)
		}
		s.flushed.Wait()
		s.flush()
	}
	s.keyMu.Lock()
	s.aead = nil
	s.keyMu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}
