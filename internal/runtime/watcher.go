package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"time"
)

// WatchOptions tune the watcher on the capsules directory.
type WatchOptions struct {
	// Interval is how often the directory is looked at (default 1 s).
	Interval time.Duration
	// Debounce is how long a capsule's files must stay unchanged before it
	// is reloaded (default 500 ms), so that a copy in progress is not
	// loaded half-written.
	Debounce time.Duration
}

// Watch starts watching the capsules directory: a capsule whose files
// changed is reloaded (Reload: never with wider grants), a new capsule
// directory is loaded (Load) and a removed one unloaded, each once its files
// have settled. It polls file sizes and modification times, which needs no
// platform support. Close stops it.
func (r *Runtime) Watch(opts WatchOptions) error {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 500 * time.Millisecond
	}
	if r.opts.CapsulesDir == "" {
		return errors.New("runtime: watch: no capsules directory")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("runtime: watch: closed")
	}
	if r.watchStop != nil {
		return errors.New("runtime: watch: already watching")
	}
	w := newWatcher(r.opts.CapsulesDir, opts.Debounce)
	w.scan(time.Now()) // what is there now is what Boot loaded
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.watchStop, r.watchDone, r.watching = stop, done, w
	go func() {
		defer close(done)
		t := time.NewTicker(opts.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				changed, removed := w.scan(now)
				for _, dir := range removed {
					r.dirRemoved(ctx, dir)
				}
				for _, dir := range changed {
					r.dirChanged(ctx, dir)
				}
			}
		}
	}()
	return nil
}

func (r *Runtime) stopWatch() {
	r.mu.Lock()
	stop, done := r.watchStop, r.watchDone
	r.watchStop, r.watchDone, r.watching = nil, nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// idOfDir returns the capsule installed in dir, if the runtime knows one.
func (r *Runtime) idOfDir(dir string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range r.order {
		if d := r.entries[id].cand.Dir; d != "" && samePath(d, dir) {
			return id
		}
	}
	return ""
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func (r *Runtime) dirChanged(ctx context.Context, dir string) {
	if id := r.idOfDir(dir); id != "" {
		if err := r.Reload(ctx, id); err != nil {
			r.log.Warn("capsule changed on disk, not reloaded", "capsule", id, "dir", dir, "err", err)
		} else {
			r.log.Info("capsule reloaded", "capsule", id, "dir", dir)
		}
		return
	}
	c, err := ReadCandidate(dir)
	if err != nil {
		r.setProblem(Problem{ID: filepath.Base(dir), Dir: dir, Err: err})
		r.publishLoaded()
		r.log.Warn("new capsule not loaded", "dir", dir, "err", err)
		return
	}
	if err := r.Load(ctx, c); err != nil {
		r.log.Warn("new capsule not loaded", "capsule", c.ID(), "dir", dir, "err", err)
		return
	}
	r.log.Info("capsule loaded", "capsule", c.ID(), "dir", dir)
}

func (r *Runtime) dirRemoved(ctx context.Context, dir string) {
	r.setProblem(Problem{Dir: dir}) // forget a problem it had
	if id := r.idOfDir(dir); id != "" {
		if err := r.Unload(ctx, id); err != nil {
			r.log.Warn("capsule removed from disk", "capsule", id, "err", err)
		} else {
			r.log.Info("capsule removed from disk and unloaded", "capsule", id, "dir", dir)
		}
	}
}

// setProblem replaces the problem recorded for p.Dir; a Problem without an
// error only removes it.
func (r *Runtime) setProblem(p Problem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.problems[:0]
	for _, q := range r.problems {
		if q.Dir != p.Dir {
			kept = append(kept, q)
		}
	}
	r.problems = kept
	if p.Err != nil {
		r.problems = append(r.problems, p)
	}
}

// watcher remembers a fingerprint of every capsule directory.
type watcher struct {
	root     string
	debounce time.Duration

	mu      sync.Mutex // scan runs on the watcher's goroutine, settle on Rescan's
	dirs    map[string]*dirState
	started bool
}

// settle records the capsule directories as they are now as acted on, so
// that a change Rescan has just handled is not handled again by the next
// scan; a change made after settle still is.
func (w *watcher) settle(now time.Time) {
	dirs, _, err := capsuleDirs(w.root)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	present := map[string]bool{}
	for _, d := range dirs {
		present[d] = true
		fp := fingerprint(d)
		w.dirs[d] = &dirState{seen: fp, settled: fp, changedAt: now}
	}
	for d := range w.dirs {
		if !present[d] {
			delete(w.dirs, d)
		}
	}
	w.started = true
}

// settleDir records dir as it is now as acted on (LoadInstalled has just
// loaded it), as settle does for every directory.
func (w *watcher) settleDir(dir string, now time.Time) {
	fp := fingerprint(dir)
	w.mu.Lock()
	defer w.mu.Unlock()
	for d := range w.dirs {
		if samePath(d, dir) {
			dir = d
		}
	}
	w.dirs[dir] = &dirState{seen: fp, settled: fp, changedAt: now}
}

type dirState struct {
	seen      string    // fingerprint at the last scan ("" once gone)
	settled   string    // fingerprint last acted on
	changedAt time.Time // when seen last changed
}

func newWatcher(root string, debounce time.Duration) *watcher {
	return &watcher{root: root, debounce: debounce, dirs: map[string]*dirState{}}
}

// scan looks at the capsules directory at time now and returns the
// directories whose files changed (or that appeared) and the ones that
// disappeared, each once its state has held for the debounce time. The
// first scan only records what is there.
func (w *watcher) scan(now time.Time) (changed, removed []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := !w.started
	w.started = true
	present := map[string]string{}
	dirs, _, err := capsuleDirs(w.root)
	if err != nil {
		return nil, nil // an unreadable directory changes nothing
	}
	for _, d := range dirs {
		present[d] = fingerprint(d)
	}
	for d, fp := range present {
		st, ok := w.dirs[d]
		if !ok {
			st = &dirState{seen: fp, changedAt: now}
			if first {
				st.settled = fp
			}
			w.dirs[d] = st
			continue
		}
		if st.seen != fp {
			st.seen, st.changedAt = fp, now
		}
	}
	for d, st := range w.dirs {
		if _, ok := present[d]; !ok && st.seen != "" {
			st.seen, st.changedAt = "", now
		}
	}
	for d, st := range w.dirs {
		if st.seen == st.settled || now.Sub(st.changedAt) < w.debounce {
			continue
		}
		st.settled = st.seen
		if st.seen == "" {
			removed = append(removed, d)
			delete(w.dirs, d)
		} else {
			changed = append(changed, d)
		}
	}
	return changed, removed
}

// fingerprint digests the names, sizes, modes and modification times of
// the files under dir, skipping directories that hold build output or
// dependencies rather than the capsule.
func fingerprint(dir string) string {
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	h := sha256.New()
	var buf [8]byte
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts are skipped, as upstream does
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "target", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		h.Write([]byte(rel))
		h.Write([]byte{0})
		for _, n := range []int64{info.Size(), info.ModTime().UnixNano(), int64(info.Mode())} {
			binary.LittleEndian.PutUint64(buf[:], uint64(n))
			h.Write(buf[:])
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}
