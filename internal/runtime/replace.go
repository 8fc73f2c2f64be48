package runtime

import (
	"context"
	"fmt"

	"github.com/astrid-go/astrid/internal/capsule"
)

// replace puts a new instance of the loaded capsule old, built from next,
// in its place: the new one is built and made ready while old serves; then,
// under commit, its tools are checked and the dispatcher's registration and
// the registry entry swapped, each in one step; then old's queued and
// running calls finish on it, and it is unloaded. A failure before the swap
// discards the new instance and keeps old, recording why. The caller holds
// ops.
func (r *Runtime) replace(ctx context.Context, old *entry, next *Candidate) error {
	id := old.cand.ID()
	e := &entry{cand: next, factory: old.factory}
	surface, discard, err := r.build(ctx, e)
	var retire func()
	if err == nil {
		if retire, err = r.swap(e, surface); err != nil {
			discard()
		}
	}
	if err != nil {
		err = fmt.Errorf("runtime: reload %s failed, the running capsule is kept: %w", id, err)
		r.mu.Lock()
		old.err = err
		r.mu.Unlock()
		r.log.Warn("reload failed", "capsule", id, "err", err)
		return err
	}
	// The new instance serves (a service starts now that its ACL is
	// registered); the old one finishes what it had, then goes.
	e.comp.Start()
	retire()
	if err := old.comp.Unload(context.WithoutCancel(ctx)); err != nil {
		r.log.Warn("unload of the replaced capsule", "capsule", id, "err", err)
	}
	if old.host != nil {
		old.host.Close()
	}
	r.log.Debug("capsule reloaded", "capsule", id, "engines", e.comp.Engines(), "tools", e.tools)
	return nil
}

// swap registers e in place of the running instance of its capsule and
// returns the dispatcher's retire for the old one.
func (r *Runtime) swap(e *entry, surface capsule.Surface) (func(), error) {
	r.commit.Lock()
	defer r.commit.Unlock()
	id, m := e.cand.ID(), e.cand.Manifest
	if err := r.toolsFree(id, e.tools); err != nil {
		return nil, err
	}
	acl := aclOf(m, surface)
	if err := plumbingGranted(m, acl); err != nil {
		return nil, err
	}
	retire, err := r.opts.Dispatcher.Replace(acl, e.comp)
	if err != nil {
		return nil, err
	}
	if _, ok := r.opts.Registry.Replace(e.comp); !ok {
		r.log.Warn("reloaded capsule was missing from the registry; added", "capsule", id)
		if err := r.opts.Registry.Add(e.comp); err != nil {
			r.log.Warn("registry after reload", "capsule", id, "err", err)
		}
	}
	e.loaded = true
	r.record(e)
	return retire, nil
}
