package wasm

import (
	"context"
	"fmt"
	"sync"
)

// pool holds a capsule's instances: grown lazily up to max, each checked
// out by one call at a time. A call prefers the idle instance that last
// served its principal, so a principal's calls tend to stay on one.
//
// One mutex guards everything; a call that finds every slot taken queues
// a channel and is handed a slot, first come first served, by the call
// that frees one. (A channel used as a semaphore cost two more channel
// operations per call, a measurable part of a no-op wasm call.)
type pool struct {
	e       *Engine
	max     int
	recycle uint32 // memory size past which an instance is retired

	mu      sync.Mutex
	idle    []*instance
	busy    int             // slots taken: instances checked out or being made
	waiters []chan struct{} // calls waiting for a slot, oldest first
	created uint64
	retired uint64
	closed  bool
}

func newPool(e *Engine, max int, recycle uint32) *pool {
	return &pool{e: e, max: max, recycle: recycle}
}

// get checks an instance out for principal. fresh reports that it took
// time: the call waited for a free slot or a new instance was made.
func (p *pool) get(ctx context.Context, principal string) (inst *instance, fresh bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, fmt.Errorf("the engine is unloaded")
	}
	if p.busy < p.max {
		p.busy++
	} else {
		fresh = true
		if err := p.wait(ctx); err != nil {
			return nil, true, err
		}
		if p.closed {
			p.releaseLocked()
			p.mu.Unlock()
			return nil, true, fmt.Errorf("the engine is unloaded")
		}
	}
	if n := len(p.idle); n > 0 {
		pick := n - 1
		for i := n - 1; i >= 0; i-- {
			if p.idle[i].lastPrincipal == principal {
				pick = i
				break
			}
		}
		inst = p.idle[pick]
		p.idle = append(p.idle[:pick], p.idle[pick+1:]...)
	}
	p.mu.Unlock()
	if inst != nil {
		return inst, fresh, nil
	}
	inst, err = p.e.newInstance(ctx)
	p.mu.Lock()
	if err != nil {
		p.releaseLocked()
	} else {
		p.created++
	}
	p.mu.Unlock()
	return inst, true, err
}

// wait queues the caller for a slot; it is called with p.mu held and
// returns with it held on success, released on failure. A slot handed over
// is already counted in busy for the caller.
func (p *pool) wait(ctx context.Context) error {
	ch := make(chan struct{}, 1)
	p.waiters = append(p.waiters, ch)
	p.mu.Unlock()
	select {
	case <-ch:
		p.mu.Lock()
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	for i, w := range p.waiters {
		if w == ch {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			p.mu.Unlock()
			return fmt.Errorf("waiting for a free instance: %w", context.Cause(ctx))
		}
	}
	// A slot was handed over as ctx ended: pass it on.
	p.releaseLocked()
	p.mu.Unlock()
	return fmt.Errorf("waiting for a free instance: %w", context.Cause(ctx))
}

// releaseLocked frees the caller's slot: to the oldest waiter if there is
// one, else back to the pool. The caller holds p.mu.
func (p *pool) releaseLocked() {
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters[0] = nil
		p.waiters = p.waiters[1:]
		w <- struct{}{} // buffered: never blocks
		return
	}
	p.busy--
}

// put returns a healthy instance, or retires it when it grew past the
// recycle threshold (Go guests never give memory back).
func (p *pool) put(inst *instance, principal string) {
	inst.lastPrincipal = principal
	p.mu.Lock()
	if p.closed || inst.broken() || inst.memoryBytes() > p.recycle {
		p.retired++
		p.releaseLocked()
		p.mu.Unlock()
		inst.close()
		return
	}
	p.idle = append(p.idle, inst)
	p.releaseLocked()
	p.mu.Unlock()
}

// discard closes an instance that trapped or was interrupted.
func (p *pool) discard(inst *instance) {
	inst.close()
	p.mu.Lock()
	p.retired++
	p.releaseLocked()
	p.mu.Unlock()
}

// seed adds a ready instance without a call (the one Load makes to fail
// fast).
func (p *pool) seed(inst *instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created++
	p.idle = append(p.idle, inst)
}

// close closes the idle instances; a checked-out one is retired when it
// comes back, and a call waiting for a slot fails when it gets one.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, inst := range idle {
		inst.close()
	}
}

// PoolStats describe a capsule's instances.
type PoolStats struct {
	Idle    int
	Busy    int
	Waiting int
	Created uint64
	Retired uint64
}

func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Idle: len(p.idle), Busy: p.busy, Waiting: len(p.waiters), Created: p.created, Retired: p.retired}
}
