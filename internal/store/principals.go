package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// KVPrincipals lists the principals that have durable keys in capsule's
// store, sorted by bytes. Tools that tidy up after a capsule for every
// principal (`astrid capsule remove`) use it; volatile keys live only in
// the process that wrote them and are not listed.
func (s *Store) KVPrincipals(capsule string) ([]string, error) {
	if err := validateCapsule(capsule); err != nil {
		return nil, fmt.Errorf("store: principals of %s: %w", short(capsule), err)
	}
	var out []string
	err := s.view(func(tx *bolt.Tx) error {
		kv := tx.Bucket(bucketKV)
		if kv == nil {
			return nil
		}
		return kv.ForEachBucket(func(p []byte) error {
			if b := kv.Bucket(p); b != nil && b.Bucket([]byte(capsule)) != nil {
				out = append(out, string(p))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: principals of %s: %w", capsule, err)
	}
	return out, nil
}
