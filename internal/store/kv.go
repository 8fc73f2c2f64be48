package store

import "fmt"

// KV is one namespace of keys and values: a capsule's own store for one
// principal (Store.KV), or a capsule's operator-set config (Store.Config).
// A KV made from a bad id returns that error from every method.
type KV struct {
	ns namespace
}

// KV is the namespace of capsule for principal. Nothing in it is visible
// from any other (principal, capsule) pair.
func (s *Store) KV(principal, capsule string) *KV {
	err := validatePrincipal(principal)
	if err == nil {
		err = validateCapsule(capsule)
	}
	label := fmt.Sprintf("kv %s/%s", short(principal), short(capsule))
	return &KV{ns: newNamespace(s, label, err, string(bucketKV), principal, capsule)}
}

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
	v, ok, err := kv.ns.get(key)
	if err != nil {
		return nil, false, kv.ns.wrap("get", key, err)
	}
	return v, ok, nil
}

// Set stores value under key (an empty value is a value) and makes it
// durable before returning.
func (kv *KV) Set(key string, value []byte) error {
	if err := kv.check(key); err != nil {
		return kv.ns.wrap("set", key, err)
	}
	if len(value) > MaxValueBytes {
		return kv.ns.wrap("set", key, fmt.Errorf("value is %d bytes, over the %d-byte limit: %w", len(value), MaxValueBytes, ErrInvalid))
	}
	if err := kv.ns.put(key, value); err != nil {
		return kv.ns.wrap("set", key, err)
	}
	return nil
}

// Delete removes key; deleting a missing key is not an error.
func (kv *KV) Delete(key string) error {
	if err := kv.check(key); err != nil {
		return kv.ns.wrap("delete", key, err)
	}
	if err := kv.ns.delete(key); err != nil {
		return kv.ns.wrap("delete", key, err)
	}
	return nil
}

// List returns the keys starting with prefix ("" for all), sorted by bytes.
func (kv *KV) List(prefix string) ([]string, error) {
	if err := kv.checkPrefix(prefix); err != nil {
		return nil, kv.ns.wrap("list", prefix, err)
	}
	keys, err := kv.ns.keys(prefix)
	if err != nil {
		return nil, kv.ns.wrap("list", prefix, err)
	}
	return keys, nil
}

// ClearPrefix deletes every key starting with prefix ("" for all) in one
// transaction and returns how many it deleted.
func (kv *KV) ClearPrefix(prefix string) (int, error) {
	if err := kv.checkPrefix(prefix); err != nil {
		return 0, kv.ns.wrap("clear prefix", prefix, err)
	}
	n, err := kv.ns.clearPrefix(prefix)
	if err != nil {
		return 0, kv.ns.wrap("clear prefix", prefix, err)
	}
	return n, nil
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
