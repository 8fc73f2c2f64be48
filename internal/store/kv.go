package store

import (
	"fmt"
	"slices"
)

// KV is one namespace of keys and values: a capsule's own store for one
// principal (Store.KV), or a capsule's operator-set config (Store.Config).
// A KV made from a bad id returns that error from every method.
//
// In a capsule's store, keys starting with '~' are volatile (volatile.go):
// Get, Set and Delete go to memory or to the file by the key; List and
// ClearPrefix cover the volatile keys when the prefix is empty or starts
// with '~', and the durable ones unless it starts with '~'.
type KV struct {
	ns       namespace
	volatile *volatileKV // nil for config, whose keys are all durable
	vid      volatileID
}

// KV is the namespace of capsule for principal. Nothing in it is visible
// from any other (principal, capsule) pair.
func (s *Store) KV(principal, capsule string) *KV {
	err := validatePrincipal(principal)
	if err == nil {
		err = validateCapsule(capsule)
	}
	label := fmt.Sprintf("kv %s/%s", short(principal), short(capsule))
	return &KV{
		ns:       newNamespace(s, label, err, string(bucketKV), principal, capsule),
		volatile: &s.volatile,
		vid:      volatileID{principal: principal, capsule: capsule},
	}
}

// isVolatile reports whether key goes to memory rather than to the file.
func (kv *KV) isVolatile(key string) bool { return kv.volatile != nil && IsVolatile(key) }

// Config is the operator-set plain env values of a capsule (its manifest's
// [env] keys that are not secrets), shared by every principal the capsule
// acts for. Capsule code never gets this view; the host reads it.
func (s *Store) Config(capsule string) *KV {
	err := validateCapsule(capsule)
	label := "config " + short(capsule)
	return &KV{ns: newNamespace(s, label, err, string(bucketConfig), capsule)}
}

// Get returns the value of key and whether it exists.
func (kv *KV) Get(key string) ([]byte, bool, error) {
	if err := kv.check(key); err != nil {
		return nil, false, kv.ns.wrap("get", key, err)
	}
	var v []byte
	var ok bool
	var err error
	if kv.isVolatile(key) {
		v, ok, err = kv.volatile.get(kv.vid, key)
	} else {
		v, ok, err = kv.ns.get(key)
	}
	if err != nil {
		return nil, false, kv.ns.wrap("get", key, err)
	}
	return v, ok, nil
}

// Set stores value under key (an empty value is a value) and, unless the
// key is volatile, makes it durable before returning. A volatile Set never
// fails for lack of room: it evicts the namespace's least recently written
// volatile keys instead (volatile.go).
func (kv *KV) Set(key string, value []byte) error {
	if err := kv.check(key); err != nil {
		return kv.ns.wrap("set", key, err)
	}
	if len(value) > MaxValueBytes {
		return kv.ns.wrap("set", key, fmt.Errorf("value is %d bytes, over the %d-byte limit: %w", len(value), MaxValueBytes, ErrInvalid))
	}
	var err error
	if kv.isVolatile(key) {
		err = kv.volatile.set(kv.vid, kv.ns.label, key, value)
	} else {
		err = kv.ns.put(key, value)
	}
	if err != nil {
		return kv.ns.wrap("set", key, err)
	}
	return nil
}

// Delete removes key; deleting a missing key is not an error.
func (kv *KV) Delete(key string) error {
	if err := kv.check(key); err != nil {
		return kv.ns.wrap("delete", key, err)
	}
	var err error
	if kv.isVolatile(key) {
		err = kv.volatile.delete(kv.vid, key)
	} else {
		err = kv.ns.delete(key)
	}
	if err != nil {
		return kv.ns.wrap("delete", key, err)
	}
	return nil
}

// List returns the keys starting with prefix ("" for all, volatile ones
// included), sorted by bytes.
func (kv *KV) List(prefix string) ([]string, error) {
	if err := kv.checkPrefix(prefix); err != nil {
		return nil, kv.ns.wrap("list", prefix, err)
	}
	var keys []string
	if !kv.isVolatile(prefix) {
		durable, err := kv.ns.keys(prefix)
		if err != nil {
			return nil, kv.ns.wrap("list", prefix, err)
		}
		keys = durable
	}
	if kv.coversVolatile(prefix) {
		volatile, err := kv.volatile.keys(kv.vid, prefix)
		if err != nil {
			return nil, kv.ns.wrap("list", prefix, err)
		}
		if len(volatile) > 0 {
			// '~' sorts among the durable keys (before DEL and
			// every non-ASCII key), so the two lists are merged.
			keys = append(keys, volatile...)
			slices.Sort(keys)
		}
	}
	return keys, nil
}

// ClearPrefix deletes every key starting with prefix ("" for all, volatile
// ones included) and returns how many it deleted. The durable keys go in one
// transaction, before the volatile ones: if it fails, nothing was deleted.
func (kv *KV) ClearPrefix(prefix string) (int, error) {
	if err := kv.checkPrefix(prefix); err != nil {
		return 0, kv.ns.wrap("clear prefix", prefix, err)
	}
	var n int
	if !kv.isVolatile(prefix) {
		durable, err := kv.ns.clearPrefix(prefix)
		if err != nil {
			return 0, kv.ns.wrap("clear prefix", prefix, err)
		}
		n = durable
	}
	if kv.coversVolatile(prefix) {
		volatile, err := kv.volatile.clearPrefix(kv.vid, prefix)
		if err != nil {
			return n, kv.ns.wrap("clear prefix", prefix, err)
		}
		n += volatile
	}
	return n, nil
}

// coversVolatile reports whether volatile keys can start with prefix.
func (kv *KV) coversVolatile(prefix string) bool {
	return kv.volatile != nil && (prefix == "" || IsVolatile(prefix))
}

func (kv *KV) check(key string) error {
	if kv.ns.err != nil {
		return kv.ns.err
	}
	return validateKey(key)
}

func (kv *KV) checkPrefix(prefix string) error {
	if kv.ns.err != nil {
		return kv.ns.err
	}
	return validatePrefix(prefix)
}
