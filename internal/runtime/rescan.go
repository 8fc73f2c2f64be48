package runtime

import (
	"context"
	"fmt"
	"time"
)

// RescanResult is what Rescan did with one installed capsule.
type RescanResult struct {
	ID  string
	Dir string
	// Action is "reloaded", "loaded" or "unloaded".
	Action string
	Err    error
}

// Rescan does at once, for every installed capsule, what the watcher does
// for one whose files settled: a capsule still in its directory is reloaded
// (Reload: atomically, never with wider grants), a new directory is loaded,
// and a capsule whose directory is gone is unloaded. The built-ins are the
// binary's and are left alone. A daemon's SIGHUP runs it. The watcher, if
// on, takes the directories as they are now as handled, so it does not
// reload what Rescan just did (an MCP server restarted twice).
func (r *Runtime) Rescan(ctx context.Context) []RescanResult {
	r.mu.Lock()
	w := r.watching
	r.mu.Unlock()
	if w != nil {
		w.settle(time.Now())
	}
	dirs, _, err := capsuleDirs(r.opts.CapsulesDir)
	if err != nil {
		return []RescanResult{{Dir: r.opts.CapsulesDir, Err: fmt.Errorf("runtime: rescan: %w", err)}}
	}
	present := map[string]bool{}
	for _, d := range dirs {
		present[d] = true
	}
	var out []RescanResult
	known := map[string]bool{}
	for _, s := range r.List() {
		if s.Builtin || s.Dir == "" || known[s.Dir] {
			continue
		}
		if _, loaded := r.entryOf(s.ID); !loaded {
			continue // a discovery problem: read again below
		}
		known[s.Dir] = true
		res := RescanResult{ID: s.ID, Dir: s.Dir, Action: "reloaded"}
		if stillThere(present, s.Dir) {
			res.Err = r.Reload(ctx, s.ID)
		} else {
			res.Action = "unloaded"
			res.Err = r.Unload(ctx, s.ID)
		}
		out = append(out, res)
	}
	for _, d := range dirs {
		if knownDir(known, d) {
			continue
		}
		res := RescanResult{ID: d, Dir: d, Action: "loaded"}
		c, err := ReadCandidate(d)
		if err != nil {
			r.setProblem(Problem{ID: d, Dir: d, Err: err})
			res.Err = err
		} else {
			res.ID = c.ID()
			res.Err = r.Load(ctx, c)
		}
		out = append(out, res)
	}
	return out
}

// entryOf reports whether the runtime has an entry for id.
func (r *Runtime) entryOf(id string) (*entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[id]
	return e, ok
}

func stillThere(present map[string]bool, dir string) bool {
	for d := range present {
		if samePath(d, dir) {
			return true
		}
	}
	return false
}

func knownDir(known map[string]bool, dir string) bool {
	for d := range known {
		if samePath(d, dir) {
			return true
		}
	}
	return false
}

// LoadInstalled does at once, for installed capsule id, what the watcher
// does once the files of its directory have settled: it reloads the capsule
// when the runtime knows it (a reinstall, or one that failed to load: an
// approval given since changes no file), loads it when it is new, and
// unloads it when its directory is gone. The watcher, if on, takes the
// directory as it is now as handled, so it does not load it a second time.
// It returns the capsule's status afterwards (its state, tools and last
// error) and the load's error. A daemon answers `capsule install` and
// `capsule approve` with it, so they return once the capsule serves
// (DESIGN §8).
func (r *Runtime) LoadInstalled(ctx context.Context, id string) (Status, error) {
	if r.opts.CapsulesDir == "" {
		return Status{}, fmt.Errorf("runtime: load %s: no capsules directory", id)
	}
	e, known := r.entryOf(id)
	if known && e.cand.Builtin() {
		return Status{}, fmt.Errorf("runtime: load %s: a built-in capsule is the binary's, not installed", id)
	}
	var found *Candidate
	cands, problems, err := Discover(nil, r.opts.CapsulesDir)
	if err != nil {
		return Status{}, fmt.Errorf("runtime: load %s: %w", id, err)
	}
	for _, c := range cands {
		if c.ID() == id {
			found = c
		}
	}
	if found == nil {
		for _, p := range problems {
			if p.ID == id {
				r.setProblem(p)
				r.publishLoaded()
				return Status{ID: id, Dir: p.Dir, State: "failed", Error: p.Err.Error()}, p.Err
			}
		}
	}
	r.mu.Lock()
	w := r.watching
	r.mu.Unlock()
	if w != nil && found != nil {
		w.settleDir(found.Dir, time.Now())
	}
	switch {
	case found == nil && known && e.cand.Dir != "":
		err = r.Unload(ctx, id)
		if err == nil {
			err = fmt.Errorf("runtime: load %s: it is no longer installed in %s; unloaded", id, r.opts.CapsulesDir)
		}
		return Status{ID: id, Dir: e.cand.Dir, State: "removed", Error: err.Error()}, err
	case found == nil:
		err = fmt.Errorf("runtime: load %s: no capsule %s is installed in %s", id, id, r.opts.CapsulesDir)
		return Status{ID: id, State: "absent", Error: err.Error()}, err
	case known && samePath(e.cand.Dir, found.Dir):
		err = r.Reload(ctx, id)
	default:
		err = r.Load(ctx, found)
	}
	for _, s := range r.List() {
		if s.ID == id {
			if err != nil && s.Error == "" {
				s.Error = err.Error()
			}
			return s, err
		}
	}
	if err == nil {
		err = fmt.Errorf("runtime: load %s: not listed after loading", id)
	}
	return Status{ID: id, Dir: found.Dir, State: "failed", Error: err.Error()}, err
}
