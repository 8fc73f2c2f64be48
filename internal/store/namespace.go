package store

import (
	"bytes"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// namespace is one leaf bucket reached through a fixed path of nested
// buckets. Its methods take already-validated keys; they do the bbolt work
// shared by KV and Secrets.
type namespace struct {
	s     *Store
	path  [][]byte
	label string // for errors: "kv alice/fs", "secrets fs"
	err   error  // a bad id: every operation returns it
}

func newNamespace(s *Store, label string, err error, path ...string) namespace {
	ns := namespace{s: s, label: label, err: err}
	for _, p := range path {
		ns.path = append(ns.path, []byte(p))
	}
	return ns
}

// wrap gives an error its place: the namespace, the operation and the key.
func (ns namespace) wrap(op, key string, err error) error {
	if key == "" {
		return fmt.Errorf("store: %s: %s: %w", ns.label, op, err)
	}
	return fmt.Errorf("store: %s: %s %q: %w", ns.label, op, short(key), err)
}

// bucket walks to the leaf bucket; nil when any level does not exist yet.
func (ns namespace) bucket(tx *bolt.Tx) *bolt.Bucket {
	b := tx.Bucket(ns.path[0])
	for _, name := range ns.path[1:] {
		if b == nil {
			return nil
		}
		b = b.Bucket(name)
	}
	return b
}

func (ns namespace) createBucket(tx *bolt.Tx) (*bolt.Bucket, error) {
	b, err := tx.CreateBucketIfNotExists(ns.path[0])
	for _, name := range ns.path[1:] {
		if err != nil {
			return nil, err
		}
		b, err = b.CreateBucketIfNotExists(name)
	}
	return b, err
}

// get returns a copy of the value (bbolt's slices die with the transaction).
// Existence is decided by the cursor, so an empty value is found, not missed.
func (ns namespace) get(key string) ([]byte, bool, error) {
	var out []byte
	var found bool
	err := ns.s.view(func(tx *bolt.Tx) error {
		b := ns.bucket(tx)
		if b == nil {
			return nil
		}
		k, v := b.Cursor().Seek([]byte(key))
		if k == nil || !bytes.Equal(k, []byte(key)) {
			return nil
		}
		found = true
		out = append(make([]byte, 0, len(v)), v...)
		return nil
	})
	return out, found, err
}

func (ns namespace) put(key string, value []byte) error {
	return ns.s.update(func(tx *bolt.Tx) error {
		b, err := ns.createBucket(tx)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), value)
	})
}

func (ns namespace) delete(key string) error {
	return ns.s.update(func(tx *bolt.Tx) error {
		b := ns.bucket(tx)
		if b == nil {
			return nil
		}
		return b.Delete([]byte(key))
	})
}

// keys lists keys with prefix in byte order, which for UTF-8 is code point
// order.
func (ns namespace) keys(prefix string) ([]string, error) {
	var out []string
	err := ns.s.view(func(tx *bolt.Tx) error {
		b := ns.bucket(tx)
		if b == nil {
			return nil
		}
		out = scan(b, prefix)
		return nil
	})
	return out, err
}

func (ns namespace) clearPrefix(prefix string) (int, error) {
	var n int
	err := ns.s.update(func(tx *bolt.Tx) error {
		n = 0 // update may run this more than once
		b := ns.bucket(tx)
		if b == nil {
			return nil
		}
		// Collect first: deleting under a live cursor skips entries.
		for _, k := range scan(b, prefix) {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func scan(b *bolt.Bucket, prefix string) []string {
	var out []string
	c := b.Cursor()
	for k, _ := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, _ = c.Next() {
		out = append(out, string(k))
	}
	return out
}
