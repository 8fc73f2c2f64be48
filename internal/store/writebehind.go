package store

import (
	"fmt"
	"log/slog"

	bolt "go.etcd.io/bbolt"
)

// Writes are buffered in memory and written to the file in one transaction
// per SyncInterval (group commit), because a bbolt transaction costs tens of
// microseconds even without fsync and a tool call makes several writes
// (the router's pending-call record is set and deleted within one call, and
// then never reaches the disk at all). Reads see buffered writes at once.
// What is at risk is the last interval's writes if the process dies
// without Close; docs/RATIONALE.md says why that is the right trade here.

// pendingNS is one namespace's buffered writes; a nil value is a delete.
type pendingNS struct {
	ns   namespace
	vals map[string][]byte
	dels map[string]bool
}

// buffered reports whether writes are buffered (SyncInterval > 0).
func (s *Store) buffered() bool { return s.stop != nil }

func (s *Store) bufferPut(ns namespace, key string, value []byte) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	p := s.pendingFor(ns)
	p.vals[key] = append(make([]byte, 0, len(value)), value...)
	delete(p.dels, key)
	s.dirty.Store(true)
}

func (s *Store) bufferDelete(ns namespace, key string) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	p := s.pendingFor(ns)
	delete(p.vals, key)
	p.dels[key] = true
	s.dirty.Store(true)
}

func (s *Store) pendingFor(ns namespace) *pendingNS {
	p := s.pending[ns.key]
	if p == nil {
		p = &pendingNS{ns: ns, vals: map[string][]byte{}, dels: map[string]bool{}}
		s.pending[ns.key] = p
	}
	return p
}

// bufferedGet looks key up in the buffered writes, newest first; known is
// false when the file must be asked.
func (s *Store) bufferedGet(ns namespace, key string) (value []byte, found, known bool) {
	k := ns.key
	s.pmu.Lock()
	defer s.pmu.Unlock()
	for _, m := range []map[string]*pendingNS{s.pending, s.flushing} {
		p := m[k]
		if p == nil {
			continue
		}
		if v, ok := p.vals[key]; ok {
			return append(make([]byte, 0, len(v)), v...), true, true
		}
		if p.dels[key] {
			return nil, false, true
		}
	}
	return nil, false, false
}

// Flush writes buffered writes to the file and flushes it to stable storage.
func (s *Store) Flush() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.pmu.Lock()
	batch := s.pending
	s.pending = map[string]*pendingNS{}
	s.flushing = batch
	s.pmu.Unlock()
	defer func() {
		s.pmu.Lock()
		s.flushing = nil
		s.pmu.Unlock()
	}()
	if len(batch) > 0 {
		err := s.db.Update(func(tx *bolt.Tx) error {
			for _, p := range batch {
				b, err := p.ns.createBucket(tx)
				if err != nil {
					return err
				}
				for k := range p.dels {
					if err := b.Delete([]byte(k)); err != nil {
						return err
					}
				}
				for k, v := range p.vals {
					if err := b.Put([]byte(k), v); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			// Put the batch back under newer writes, so nothing is lost
			// while the file misbehaves.
			s.pmu.Lock()
			for k, old := range batch {
				cur := s.pending[k]
				if cur == nil {
					s.pending[k] = old
					continue
				}
				for key, v := range old.vals {
					if _, newer := cur.vals[key]; !newer && !cur.dels[key] {
						cur.vals[key] = v
					}
				}
				for key := range old.dels {
					if _, newer := cur.vals[key]; !newer {
						cur.dels[key] = true
					}
				}
			}
			s.pmu.Unlock()
			s.dirty.Store(true)
			return fmt.Errorf("store: flush %s: %w", s.path, err)
		}
	}
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("store: sync %s: %w", s.path, err)
	}
	return nil
}

func (s *Store) flush() {
	if !s.dirty.Swap(false) {
		return
	}
	if err := s.Flush(); err != nil {
		s.dirty.Store(true)
		slog.Error("store: flush failed; will retry", "err", err)
	}
}

// flushBuffered writes buffered writes before an operation that reads or
// changes a whole prefix in the file (list, clear).
func (s *Store) flushBuffered() error {
	if !s.buffered() {
		return nil
	}
	s.pmu.Lock()
	empty := len(s.pending) == 0
	s.pmu.Unlock()
	if empty {
		return nil
	}
	return s.Flush()
}
