package wasm

import (
	"context"
	"fmt"
	"sync"
)

// pool holds a capsule's instances: grown lazily up to max, each checked
// out by one call at a time. A call prefers the idle instance that last
// served its principal, so a principal's calls tend to stay on one.
type pool struct {
	e       *Engine
	slots   chan struct{} // one token per checked-out or creatable instance
	recycle uint32        // memory size past which an instance is retired

	mu      sync.Mutex
	idle    []*instance
	created uint64
	retired uint64
	closed  bool
}

func newPool(e *Engine, max int, recycle uint32) *pool {
	return &pool{e: e, slots: make(chan struct{}, max), recycle: recycle}
}

// get checks an instance out for principal. fresh reports that it took
// time: the call waited for a free slot or a new instance was made.
func (p *pool) get(ctx context.Context, principal string) (inst *instance, fresh bool, err error) {
	select {
	case p.slots <- struct{}{}:
	default:
		fresh = true
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, true, fmt.Errorf("waiting for a free instance: %w", context.Cause(ctx))
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, fresh, fmt.Errorf("the engine is unloaded")
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
	if err != nil {
		<-p.slots
		return nil, true, err
	}
	p.mu.Lock()
	p.created++
	p.mu.Unlock()
	return inst, true, nil
}

// put returns a healthy instance, or retires it when it grew past the
// recycle threshold (Go guests never give memory back).
func (p *pool) put(inst *instance, principal string) {
	inst.lastPrincipal = principal
	p.mu.Lock()
	if p.closed || inst.broken() || inst.memoryBytes() > p.recycle {
		p.retired++
		p.mu.Unlock()
		inst.close()
		<-p.slots
		return
	}
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
	<-p.slots
}

// discard closes an instance that trapped or was interrupted.
func (p *pool) discard(inst *instance) {
	inst.close()
	p.mu.Lock()
	p.retired++
	p.mu.Unlock()
	<-p.slots
}

// seed adds a ready instance without a call (the one Load makes to fail
// fast).
func (p *pool) seed(inst *instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created++
	p.idle = append(p.idle, inst)
}

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
	Created uint64
	Retired uint64
}

func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Idle: len(p.idle), Busy: len(p.slots), Created: p.created, Retired: p.retired}
}
