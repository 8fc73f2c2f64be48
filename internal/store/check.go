package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Check walks the whole database file and returns every inconsistency
// bbolt finds in it (a page referenced twice, a freed page in use, an
// unreachable page), joined; nil for a sound file. It reads under the
// file's lock like any operation, so it waits for another process's write
// as they do (up to Options.Timeout).
func (s *Store) Check() error {
	var probs []error
	err := s.view(func(tx *bolt.Tx) error {
		for e := range tx.Check() {
			probs = append(probs, e)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: check %s: %w", s.path, err)
	}
	if len(probs) > 0 {
		return fmt.Errorf("store: %s is inconsistent: %w", s.path, errors.Join(probs...))
	}
	return nil
}
