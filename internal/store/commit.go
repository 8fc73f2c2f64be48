package store

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// A write returns only once its transaction is committed and on stable
// storage (bbolt fsyncs every commit), so what a capsule saw succeed
// survives kill -9 or a power cut. What makes that affordable is sharing
// commits: writes that overlap in this process join one transaction
// (bbolt's DB.Batch), paying one fsync between them.

// batchDelay is how long a batch waits for more writes to join before it
// commits. It is paid only by a write that arrives while another write is
// in flight, which then waits for that write's commit anyway.
const batchDelay = time.Millisecond

// update runs fn in a write transaction under a lease and returns once it
// is durable. fn may run more than once (DB.Batch retries a failed batch
// one function at a time), so it must set, not accumulate, what it reports.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	db, err := s.acquire()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.writers++
	alone := s.writers == 1
	s.mu.Unlock()
	if alone {
		// Nobody to share a commit with: waiting batchDelay would only
		// add latency.
		err = db.Update(fn)
	} else {
		err = db.Batch(fn)
	}
	s.mu.Lock()
	s.writers--
	s.mu.Unlock()
	s.release()
	return err
}
