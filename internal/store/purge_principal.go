package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// PurgePrincipal deletes everything every capsule keeps for principal (its
// KV in each capsule's store, volatile keys included: sessions, memory,
// capability tokens, counters), in one transaction: if it fails, nothing
// was deleted. It returns the capsules that kept something. It is what
// removing an agent without --keep-data means; files outside the store
// (its home:// directory) are the caller's.
func (s *Store) PurgePrincipal(principal string) ([]string, error) {
	if err := validatePrincipal(principal); err != nil {
		return nil, fmt.Errorf("store: purge principal %s: %w", short(principal), err)
	}
	var capsules []string
	err := s.update(func(tx *bolt.Tx) error {
		kv := tx.Bucket(bucketKV)
		if kv == nil || kv.Bucket([]byte(principal)) == nil {
			return nil
		}
		if err := kv.Bucket([]byte(principal)).ForEachBucket(func(c []byte) error {
			capsules = append(capsules, string(c))
			return nil
		}); err != nil {
			return err
		}
		return kv.DeleteBucket([]byte(principal))
	})
	if err != nil {
		return nil, fmt.Errorf("store: purge principal %s: %w", principal, err)
	}
	s.volatile.purgePrincipal(principal)
	return capsules, nil
}

// purgePrincipal forgets every volatile key of principal, whatever the
// capsule.
func (v *volatileKV) purgePrincipal(principal string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for id := range v.spaces {
		if id.principal == principal {
			delete(v.spaces, id)
		}
	}
}
