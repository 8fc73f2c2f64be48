package host

import (
	"errors"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/store"
)

func (call *Call) kvReady(op string) error {
	if err := call.live(op); err != nil {
		return err
	}
	if call.kv == nil && call.c.deps.Store != nil {
		call.kv = call.c.kvOf(call.principal)
	}
	if call.kv == nil {
		return hostapi.Errorf(hostapi.CodeUnavailable, op, "this kernel runs without a store")
	}
	return nil
}

func kvErr(op string, err error) error {
	if errors.Is(err, store.ErrInvalid) {
		return hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
	}
	return hostapi.Errorf(hostapi.CodeIO, op, "%v", err)
}

// KVGet implements hostapi.KV.
func (call *Call) KVGet(key string) ([]byte, bool, error) {
	defer call.leave(call.enter(opKVGet))
	if err := call.kvReady("kv_get"); err != nil {
		return nil, false, err
	}
	v, ok, err := call.kv.Get(key)
	if err != nil {
		return nil, false, kvErr("kv_get", err)
	}
	return v, ok, nil
}

// KVSet implements hostapi.KV.
func (call *Call) KVSet(key string, value []byte) error {
	defer call.leave(call.enter(opKVSet))
	if err := call.kvReady("kv_set"); err != nil {
		return err
	}
	if err := call.kv.Set(key, value); err != nil {
		return kvErr("kv_set", err)
	}
	return nil
}

// KVDelete implements hostapi.KV.
func (call *Call) KVDelete(key string) error {
	defer call.leave(call.enter(opKVDelete))
	if err := call.kvReady("kv_delete"); err != nil {
		return err
	}
	if err := call.kv.Delete(key); err != nil {
		return kvErr("kv_delete", err)
	}
	return nil
}

// KVList implements hostapi.KV.
func (call *Call) KVList(prefix string) ([]string, error) {
	defer call.leave(call.enter(opKVList))
	if err := call.kvReady("kv_list"); err != nil {
		return nil, err
	}
	keys, err := call.kv.List(prefix)
	if err != nil {
		return nil, kvErr("kv_list", err)
	}
	return keys, nil
}

// KVClear implements hostapi.KV.
func (call *Call) KVClear(prefix string) (int, error) {
	defer call.leave(call.enter(opKVClear))
	if err := call.kvReady("kv_clear"); err != nil {
		return 0, err
	}
	n, err := call.kv.ClearPrefix(prefix)
	if err != nil {
		return 0, kvErr("kv_clear", err)
	}
	return n, nil
}

// maxCachedKVs bounds the per-principal KV handles a capsule keeps.
const maxCachedKVs = 256

// kvOf returns the capsule's KV namespace for principal. A handle is an
// immutable view, so the ones of recent principals are kept rather than
// rebuilt on every call.
func (c *Capsule) kvOf(principal string) *store.KV {
	c.kvMu.Lock()
	defer c.kvMu.Unlock()
	if kv := c.kvs[principal]; kv != nil {
		return kv
	}
	kv := c.deps.Store.KV(principal, c.id)
	if len(c.kvs) >= maxCachedKVs {
		clear(c.kvs)
	}
	if c.kvs == nil {
		c.kvs = map[string]*store.KV{}
	}
	c.kvs[principal] = kv
	return kv
}
