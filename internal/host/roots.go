package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/astrid-go/astrid/internal/gate"
)

// maxCachedRoots bounds the trusted bases a capsule keeps open: the
// workspace, its install directory and the homes of the principals it serves
// most. Past the bound a base is opened for the one operation, as before.
const maxCachedRoots = 32

// roots keeps the trusted base directories of a capsule's grants open for
// the capsule's lifetime, so that a file operation costs the open of the file
// and not also an open and close of its root. Opening a granted directory
// still goes through its base (Root.OpenRoot), so a symlink planted where the
// granted directory should be cannot lead out.
//
// A cached base follows the directory it opened, as an open file does: if
// that directory is renamed and another takes its path, operations keep
// going to the first one until a lookup misses there, which re-opens the
// path (stale). Nothing outside a granted directory becomes reachable.
type roots struct {
	mu     sync.Mutex
	open   map[string]*os.Root // by gate.Root.Base
	closed bool
}

// has reports whether a root on dir is cached.
func (rs *roots) has(dir string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.open[dir] != nil
}

// base returns an os.Root on dir and whether it came from the cache (a
// cached root must not be closed by the caller; a fresh one must be).
func (rs *roots) base(dir string) (*os.Root, bool, error) {
	rs.mu.Lock()
	if r := rs.open[dir]; r != nil {
		rs.mu.Unlock()
		return r, true, nil
	}
	rs.mu.Unlock()
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, false, err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed || len(rs.open) >= maxCachedRoots {
		return r, false, nil
	}
	if prev := rs.open[dir]; prev != nil { // another call opened it meanwhile
		r.Close()
		return prev, true, nil
	}
	if rs.open == nil {
		rs.open = map[string]*os.Root{}
	}
	rs.open[dir] = r
	return r, true, nil
}

// stale reports whether the cached root on dir no longer is the directory
// at dir (removed, or replaced by another one); a stale root is forgotten,
// so that the next operation opens dir afresh.
func (rs *roots) stale(dir string, r *os.Root) bool {
	held, err := r.Stat(".")
	if err == nil {
		now, serr := os.Stat(dir)
		if serr == nil && os.SameFile(held, now) {
			return false
		}
	}
	rs.mu.Lock()
	if rs.open[dir] == r {
		delete(rs.open, dir)
		r.Close() // operations already in flight on r finish first (os.Root counts them)
	}
	rs.mu.Unlock()
	return true
}

// close closes every cached root; later operations open their base afresh.
func (rs *roots) close() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.closed = true
	for dir, r := range rs.open {
		r.Close()
		delete(rs.open, dir)
	}
}

// granted is an os.Root on a granted directory, with what closing it takes.
type granted struct {
	*os.Root
	owned bool // opened for this operation: close it after
}

func (g granted) release() {
	if g.owned {
		g.Close()
	}
}

// openGranted opens the granted directory of r through its trusted base
// (cached), so that a symlink planted where the granted directory should be
// (home://notes → /etc) cannot redirect the root itself. cached says the
// base came from the cache, so a not-found error may mean a stale base.
func (rs *roots) openGranted(r gate.Root) (g granted, base *os.Root, cached bool, err error) {
	base, cached, err = rs.base(r.Base)
	if err != nil {
		return granted{}, nil, false, err
	}
	sub := r.Sub()
	if sub == "." || sub == "" {
		return granted{Root: base, owned: !cached}, base, cached, nil
	}
	if !cached {
		defer base.Close()
	}
	sr, err := base.OpenRoot(filepath.FromSlash(sub))
	if err != nil {
		return granted{}, base, cached, err
	}
	return granted{Root: sr, owned: true}, base, cached, nil
}

// retryable reports whether err from an operation through a cached base may
// come from the base having gone stale rather than from the request.
func retryable(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrClosed)
}
