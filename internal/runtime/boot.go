package runtime

import (
	"context"
	"fmt"
	"strings"
)

// A boot loads every capsule concurrently, each as soon as the providers of
// its imports have finished loading (the order Order computes, as a graph
// rather than a line). So one capsule that is slow to get ready, such as an
// MCP server that never answers initialize, delays only the capsules that
// import from it, not every other capsule and not the command that booted
// the kernel: Start returns once the built-ins are loaded, and a command
// waits (WaitForTool, Wait) only for the capsules it needs.

// bootRun is one boot in progress or done.
type bootRun struct {
	cancel context.CancelFunc
	loads  []*pendingLoad // in Order's order
	done   chan struct{}  // closed when every load has finished
}

// pendingLoad is one capsule of a boot.
type pendingLoad struct {
	cand *Candidate
	deps []*pendingLoad // providers of its imports
	done chan struct{}  // closed when its load has finished
	err  error          // set before done is closed
}

// Boot discovers the built-ins and the installed capsules and loads them
// all (Start), then waits until every one has finished loading, and
// publishes astrid.v1.capsules_loaded once. An installed capsule that cannot
// load is recorded (see List) and skipped; a built-in that cannot load fails
// the boot, since the binary itself is broken.
func (r *Runtime) Boot(ctx context.Context) error {
	if err := r.Start(ctx); err != nil {
		return err
	}
	return r.Wait(ctx)
}

// Start discovers and orders the capsules as Boot does and starts loading
// them concurrently, each once the providers of its imports are loaded. It
// returns when every built-in has loaded (or one has failed: the error);
// installed capsules go on loading in the background, and
// astrid.v1.capsules_loaded is published when the last has finished.
// Load, Reload, Unload and Close wait for the boot to finish (Close cancels
// it first). ctx bounds the whole boot, background included.
func (r *Runtime) Start(ctx context.Context) error {
	r.ops.Lock()
	plan, err := r.plan()
	if err != nil {
		r.ops.Unlock()
		return err
	}
	bctx, cancel := context.WithCancel(ctx)
	run := &bootRun{cancel: cancel, loads: plan, done: make(chan struct{})}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		cancel()
		r.ops.Unlock()
		return fmt.Errorf("runtime: boot: %w", errClosed)
	}
	r.boot = run
	for _, p := range plan {
		// Listed in load order from the start, as loading.
		if _, known := r.entries[p.cand.ID()]; !known {
			r.order = append(r.order, p.cand.ID())
		}
		r.entries[p.cand.ID()] = &entry{cand: p.cand, loading: true}
	}
	r.mu.Unlock()
	for _, p := range plan {
		go r.loadWhenReady(bctx, p)
	}
	go func() {
		defer r.ops.Unlock() // held for the boot: changes wait for it
		for _, p := range plan {
			<-p.done
		}
		// A boot cut short (the kernel closing before every capsule was
		// needed) has not settled who provides what: the provider record
		// is left as it was.
		if bctx.Err() == nil {
			r.publishLoaded()
		}
		cancel()
		close(run.done)
	}()
	for _, p := range plan {
		if !p.cand.Builtin() {
			continue
		}
		<-p.done
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// loadWhenReady loads p once its providers have finished loading. A
// provider that failed does not stop it: the capsule's own load then says
// what is missing, as a sequential load would.
func (r *Runtime) loadWhenReady(ctx context.Context, p *pendingLoad) {
	defer close(p.done)
	for _, d := range p.deps {
		select {
		case <-d.done:
		case <-ctx.Done():
			p.err = fmt.Errorf("runtime: load %s: boot stopped while waiting for %s: %w", p.cand.ID(), d.cand.ID(), ctx.Err())
			r.record(&entry{cand: p.cand, err: p.err})
			return
		}
	}
	// No two capsules of a boot may provide one tool (claimTools settled
	// that before the order), so loads need no turn among themselves.
	p.err = r.load(ctx, p.cand, nil)
	switch {
	case p.err == nil || p.cand.Builtin():
	case ctx.Err() != nil:
		// Cancelled: the kernel is closing (a one-shot command is done
		// before this capsule was needed). Not the operator's problem.
		r.log.Debug("capsule load cancelled", "capsule", p.cand.ID(), "err", p.err)
	default:
		r.log.Warn("capsule not loaded", "capsule", p.cand.ID(), "dir", p.cand.Dir, "err", p.err)
	}
}

// plan discovers and orders the capsules and records those that cannot
// load at all; the caller holds ops.
func (r *Runtime) plan() ([]*pendingLoad, error) {
	cands, problems, err := Discover(r.opts.Builtins, r.opts.CapsulesDir)
	if err != nil {
		return nil, err
	}
	if r.opts.SkillsDir != "" {
		lib, refused := SkillLibrary(r.opts.SkillsDir)
		if lib != nil {
			cands = append(cands, lib)
		}
		problems = append(problems, refused...)
	}
	for _, p := range problems {
		r.log.Warn("capsule not loaded", "capsule", p.ID, "dir", p.Dir, "err", p.Err)
	}
	byID := map[string]*Candidate{}
	for _, c := range cands {
		byID[c.ID()] = c
	}
	// Tools are settled before the order, so that a capsule refused for a
	// contested tool leaves its consumers' imports unmet, as any capsule
	// that cannot load does.
	cands, contested := claimTools(cands, r.readProviders())
	for _, p := range contested {
		r.log.Warn("capsule not loaded", "capsule", p.ID, "dir", p.Dir, "err", p.Err)
		r.record(&entry{cand: byID[p.ID], err: p.Err})
	}
	ordered, unordered := Order(cands)
	for _, p := range unordered {
		c := byID[p.ID]
		if c.Builtin() {
			return nil, fmt.Errorf("runtime: built-in %w", p.Err)
		}
		r.log.Warn("capsule not loaded", "capsule", p.ID, "dir", p.Dir, "err", p.Err)
		r.record(&entry{cand: c, err: p.Err})
	}
	r.mu.Lock()
	r.problems = problems
	r.mu.Unlock()
	loads := make([]*pendingLoad, len(ordered))
	byCand := map[*Candidate]*pendingLoad{}
	for i, c := range ordered {
		loads[i] = &pendingLoad{cand: c, done: make(chan struct{})}
		byCand[c] = loads[i]
	}
	none := map[string]error{}
	for _, p := range loads {
		seen := map[*pendingLoad]bool{}
		for _, imp := range p.cand.Manifest.Imports {
			// Optional imports too: when a provider exists, it goes first.
			for _, prov := range providers(imp, p.cand, ordered, none) {
				if d := byCand[prov]; !seen[d] {
					seen[d] = true
					p.deps = append(p.deps, d)
				}
			}
		}
	}
	return loads, nil
}

// Wait waits until the boot has finished loading every capsule (at once
// when there is none in progress).
func (r *Runtime) Wait(ctx context.Context) error {
	r.mu.Lock()
	run := r.boot
	r.mu.Unlock()
	if run == nil {
		return nil
	}
	select {
	case <-run.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runtime: waiting for capsules to load: %w", ctx.Err())
	}
}

// WaitForTool waits until every capsule of the boot that may provide tool
// has finished loading: one whose manifest names it, or whose MCP server's
// id prefixes it (`<server id>:<tool>`). A tool no manifest names may come
// from any capsule's engines, so then it waits for all of them. It does not
// wait for the others: a hung MCP server delays only calls of its own
// tools.
func (r *Runtime) WaitForTool(ctx context.Context, tool string) error {
	r.mu.Lock()
	run := r.boot
	r.mu.Unlock()
	if run == nil {
		return nil
	}
	var wait []*pendingLoad
	for _, p := range run.loads {
		if mayProvide(p.cand, tool) {
			wait = append(wait, p)
		}
	}
	if len(wait) == 0 {
		wait = run.loads
	}
	for _, p := range wait {
		select {
		case <-p.done:
		case <-ctx.Done():
			return fmt.Errorf("runtime: waiting for capsule %s, which may provide tool %s, to load: %w", p.cand.ID(), tool, ctx.Err())
		}
	}
	return nil
}

// mayProvide reports whether c may provide tool, by what its manifest says
// before it is loaded.
func mayProvide(c *Candidate, tool string) bool {
	for _, name := range toolNames(c.Manifest, emptySurface) {
		if name == tool {
			return true
		}
	}
	for _, srv := range c.Manifest.MCPServers {
		if strings.HasPrefix(tool, srv.ID+":") {
			return true
		}
	}
	return false
}

// stopBoot cancels a boot in progress, so that Close need not wait for a
// capsule that is slow to get ready.
func (r *Runtime) stopBoot() {
	r.mu.Lock()
	run := r.boot
	r.mu.Unlock()
	if run != nil {
		run.cancel()
	}
}
