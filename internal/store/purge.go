package store

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Purge deletes everything kept for capsule: its KV for every principal
// (volatile keys included), its config values and its secrets, in one
// transaction: if it fails, nothing was deleted. It is what removing a
// capsule with --purge means; its approval record is the installer's to
// delete (Approvals.Delete), kept or not independently.
func (s *Store) Purge(capsule string) error {
	if err := validateCapsule(capsule); err != nil {
		return fmt.Errorf("store: purge %s: %w", short(capsule), err)
	}
	name := []byte(capsule)
	drop := func(parent *bolt.Bucket) error {
		if parent == nil || parent.Bucket(name) == nil {
			return nil
		}
		return parent.DeleteBucket(name)
	}
	err := s.update(func(tx *bolt.Tx) error {
		if kv := tx.Bucket(bucketKV); kv != nil {
			// Collect the principals first: a bucket must not change
			// under a live cursor.
			var principals [][]byte
			if err := kv.ForEachBucket(func(p []byte) error {
				principals = append(principals, append([]byte(nil), p...))
				return nil
			}); err != nil {
				return err
			}
			for _, p := range principals {
				if err := drop(kv.Bucket(p)); err != nil {
					return err
				}
			}
		}
		secrets := tx.Bucket(bucketSecrets)
		var tokens error
		if secrets != nil && secrets.Bucket([]byte(mcpTokensPrefix+capsule)) != nil {
			tokens = secrets.DeleteBucket([]byte(mcpTokensPrefix + capsule))
		}
		// Every principal's own values of the capsule go too.
		var own []error
		for _, parent := range []*bolt.Bucket{tx.Bucket(bucketConfig), secrets} {
			if parent == nil {
				continue
			}
			var names [][]byte
			if err := parent.ForEachBucket(func(p []byte) error {
				if bytes.HasPrefix(p, []byte(principalEnvPrefix)) {
					names = append(names, append([]byte(nil), p...))
				}
				return nil
			}); err != nil {
				return err
			}
			for _, n := range names {
				own = append(own, drop(parent.Bucket(n)))
			}
		}
		return errors.Join(drop(tx.Bucket(bucketConfig)), drop(secrets), tokens, errors.Join(own...))
	})
	if err != nil {
		return fmt.Errorf("store: purge %s: %w", capsule, err)
	}
	if err := s.volatile.purge(capsule); err != nil {
		return fmt.Errorf("store: purge %s: %w", capsule, err)
	}
	return nil
}

// purge forgets every volatile key of capsule, whatever the principal.
func (v *volatileKV) purge(capsule string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	for id := range v.spaces {
		if id.capsule == capsule {
			delete(v.spaces, id)
		}
	}
	return nil
}
