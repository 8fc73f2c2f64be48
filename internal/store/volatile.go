package store

import (
	"container/list"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// A KV key whose first byte is '~' (VolatilePrefix) is volatile: it lives in
// this process's memory, in the same (principal, capsule) namespace as the
// durable keys and under the same key and value rules, is never written to
// state.db, and is gone when the Store is closed or the process ends. It is
// for bookkeeping that a restart makes meaningless anyway (the router's
// pending calls), which a durable write would make pay two fsyncs per tool
// call (docs/rationale/store.md).
//
// Memory is bounded per namespace: a Set that takes a namespace past
// MaxVolatileKeys keys or MaxVolatileBytes bytes (keys plus values) evicts
// the namespace's least recently written volatile keys until it fits. The
// write itself never fails for it; each eviction is counted
// (Store.VolatileEvictions) and logged with its reason.

// VolatilePrefix starts every volatile key; no durable key starts with it.
const VolatilePrefix = "~"

// Per-namespace bounds of volatile keys. The router keeps one ≈ 100-byte
// key per tool call in flight for a principal, far below 4096; 4 MiB holds
// four values of the largest size (MaxValueBytes) with their keys.
const (
	MaxVolatileKeys  = 4096
	MaxVolatileBytes = 4 << 20
)

// evictionLogFirst and evictionLogEvery pace the eviction log of one
// namespace: its first evictions each get a line, then every
// evictionLogEvery-th (each line carries the namespace's total), so a
// capsule writing in a loop cannot flood the log; the counter misses none.
const (
	evictionLogFirst = 16
	evictionLogEvery = 1024
)

// IsVolatile reports whether key (or a prefix) names volatile keys: whether
// its first byte is '~'.
func IsVolatile(key string) bool { return strings.HasPrefix(key, VolatilePrefix) }

// volatileID names one namespace of volatile keys.
type volatileID struct{ principal, capsule string }

// volatileEntry is one key, an element of its space's write order.
type volatileEntry struct {
	key   string
	value []byte
}

// volatileSpace is the volatile keys of one namespace: a map for lookups and
// a list in write order (front = least recently written) for eviction.
type volatileSpace struct {
	entries map[string]*list.Element // of *volatileEntry
	order   list.List
	bytes   int    // sum of len(key)+len(value)
	evicted uint64 // over the space's lifetime, for the log
}

// volatileKV is the volatile keys of every namespace of a Store. One mutex
// guards it all: every operation is a map lookup or a short scan.
type volatileKV struct {
	mu      sync.Mutex
	spaces  map[volatileID]*volatileSpace
	closed  bool
	evicted atomic.Uint64
}

func (v *volatileKV) get(id volatileID, key string) ([]byte, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, false, ErrClosed
	}
	sp := v.spaces[id]
	if sp == nil {
		return nil, false, nil
	}
	el := sp.entries[key]
	if el == nil {
		return nil, false, nil
	}
	value := el.Value.(*volatileEntry).value
	return append(make([]byte, 0, len(value)), value...), true, nil
}

// set stores a copy of value and evicts what no longer fits; label names
// the namespace in the eviction log.
func (v *volatileKV) set(id volatileID, label, key string, value []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	if v.spaces == nil {
		v.spaces = map[volatileID]*volatileSpace{}
	}
	sp := v.spaces[id]
	if sp == nil {
		sp = &volatileSpace{entries: map[string]*list.Element{}}
		v.spaces[id] = sp
	}
	value = append(make([]byte, 0, len(value)), value...)
	if el := sp.entries[key]; el != nil {
		e := el.Value.(*volatileEntry)
		sp.bytes += len(value) - len(e.value)
		e.value = value
		sp.order.MoveToBack(el)
	} else {
		sp.entries[key] = sp.order.PushBack(&volatileEntry{key: key, value: value})
		sp.bytes += len(key) + len(value)
	}
	// The entry just written is at the back and fits on its own (a key
	// and a value at their limits are far below MaxVolatileBytes), so the
	// loop never evicts it.
	for len(sp.entries) > MaxVolatileKeys || sp.bytes > MaxVolatileBytes {
		reason := fmt.Sprintf("over %d volatile keys", MaxVolatileKeys)
		if len(sp.entries) <= MaxVolatileKeys {
			reason = fmt.Sprintf("over %d bytes of volatile keys and values", MaxVolatileBytes)
		}
		v.evictOldest(sp, label, reason)
	}
	return nil
}

// evictOldest drops the least recently written key of sp, counts and logs
// it. v.mu must be held.
func (v *volatileKV) evictOldest(sp *volatileSpace, label, reason string) {
	e := sp.order.Remove(sp.order.Front()).(*volatileEntry)
	delete(sp.entries, e.key)
	sp.bytes -= len(e.key) + len(e.value)
	sp.evicted++
	v.evicted.Add(1)
	if sp.evicted <= evictionLogFirst || sp.evicted%evictionLogEvery == 0 {
		slog.Warn("store: volatile key evicted", "namespace", label, "key", short(e.key),
			"reason", reason, "evicted_in_namespace", sp.evicted)
	}
}

func (v *volatileKV) delete(id volatileID, key string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	sp := v.spaces[id]
	if sp == nil {
		return nil
	}
	if el := sp.entries[key]; el != nil {
		v.remove(id, sp, el)
	}
	return nil
}

// remove drops one entry, and the space once it is empty, so a principal
// that came and went leaves nothing behind. v.mu must be held.
func (v *volatileKV) remove(id volatileID, sp *volatileSpace, el *list.Element) {
	e := sp.order.Remove(el).(*volatileEntry)
	delete(sp.entries, e.key)
	sp.bytes -= len(e.key) + len(e.value)
	if len(sp.entries) == 0 {
		delete(v.spaces, id)
	}
}

// keys returns the volatile keys starting with prefix, sorted by bytes.
func (v *volatileKV) keys(id volatileID, prefix string) ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, ErrClosed
	}
	out := v.matching(id, prefix)
	slices.Sort(out)
	return out, nil
}

func (v *volatileKV) clearPrefix(id volatileID, prefix string) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return 0, ErrClosed
	}
	sp := v.spaces[id]
	keys := v.matching(id, prefix)
	for _, k := range keys {
		v.remove(id, sp, sp.entries[k])
	}
	return len(keys), nil
}

// matching lists the keys of id starting with prefix, unsorted. v.mu must
// be held.
func (v *volatileKV) matching(id volatileID, prefix string) []string {
	sp := v.spaces[id]
	if sp == nil {
		return nil
	}
	var out []string
	for k := range sp.entries {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// close forgets every volatile key; operations after it fail with
// ErrClosed.
func (v *volatileKV) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.closed = true
	v.spaces = nil
}

// VolatileEvictions is how many volatile keys were evicted to keep their
// namespaces within MaxVolatileKeys and MaxVolatileBytes since Open.
func (s *Store) VolatileEvictions() uint64 { return s.volatile.evicted.Load() }
