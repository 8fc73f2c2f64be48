package host

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/gate"
)

// The gate decides lexically which granted root a path falls under; the I/O
// then goes through an os.Root opened on that root, so a symlink cannot lead
// out of it and there is no check-then-open race (DESIGN §4, Files). What is
// opened under a fenced root is checked against $ASTRID_HOME (fs_fence.go).

// inRoot checks path against the gate and runs fn on the granted directory
// it falls under, with path's part below that directory and the fence fn
// applies to what it opens. fn returns raw os errors, which are turned into
// hostapi errors here, or hostapi errors.
func (call *Call) inRoot(op, path string, write bool, fn func(root *os.Root, rel string, fc fsFence) error) error {
	if err := call.live(op); err != nil {
		return err
	}
	var r gate.Root
	var err error
	capability := "fs_read"
	if write {
		capability = "fs_write"
		r, err = call.gate().FSWrite(call.principal, path)
	} else {
		r, err = call.gate().FSRead(call.principal, path)
	}
	if err != nil {
		return denied(err)
	}
	rel := filepath.FromSlash(r.Rel)
	fc := fsFence{r: r, capability: capability, request: path}
	return call.c.withGranted(op, path, r, func(root *os.Root) error { return fn(root, rel, fc) })
}

// withGranted runs fn on the granted directory of r. If fn (or opening the
// directory) finds nothing where a cached base is, the base may have been
// removed or replaced since it was opened: then it is opened afresh and fn
// runs once more.
func (c *Capsule) withGranted(op, path string, r gate.Root, fn func(root *os.Root) error) error {
	for attempt := 0; ; attempt++ {
		if strings.HasPrefix(r.Grant, "home://") && !c.roots.has(r.Base) {
			// A principal's home exists once something is granted in it.
			if err := os.MkdirAll(r.Base, 0o700); err != nil {
				return hostapi.Errorf(hostapi.CodeIO, op, "create home: %v", err)
			}
		}
		g, base, cached, err := c.roots.openGranted(r)
		if err == nil {
			err = fn(g.Root)
			g.release()
		}
		if err == nil {
			return nil
		}
		if attempt == 0 && cached && retryable(err) && c.roots.stale(r.Base, base) {
			continue
		}
		var he *hostapi.Error
		if errors.As(err, &he) {
			return err
		}
		return fsErr(op, path, err)
	}
}

func fsErr(op, path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return hostapi.Errorf(hostapi.CodeNotFound, op, "%s does not exist", path)
	case errors.Is(err, fs.ErrExist):
		return hostapi.Errorf(hostapi.CodeExists, op, "%s already exists", path)
	case errors.Is(err, fs.ErrPermission):
		return hostapi.Errorf(hostapi.CodeDenied, op, "%s: permission denied by the operating system", path)
	}
	msg := err.Error()
	if strings.Contains(msg, "path escapes from parent") {
		return hostapi.Errorf(hostapi.CodeDenied, op, "%s leads outside the granted directory (symlink)", path)
	}
	return hostapi.Errorf(hostapi.CodeIO, op, "%s: %v", path, err)
}

// openRead opens rel under root for reading with O_NONBLOCK. For a regular
// file or a directory the flag changes nothing but saves os four fcntl calls
// per open (it would set non-blocking mode, fail to register the file with
// the poller, and clear it again); for a FIFO someone left in the workspace
// it means the open returns at once instead of blocking the handler's
// thread until a writer appears.
func openRead(root *os.Root, rel string) (*os.File, error) {
	return root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// interruptReads makes a read of f that waits (a FIFO, a socket someone left
// in the workspace) end when the call is cancelled or times out; the
// returned func stops watching. A regular file never waits and is not
// watched: SetReadDeadline on it fails without a system call.
func (call *Call) interruptReads(f *os.File) func() {
	if f.SetReadDeadline(time.Time{}) != nil {
		return func() {}
	}
	stop := context.AfterFunc(call.ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	return func() { stop() }
}

// FSRead implements hostapi.FS.
func (call *Call) FSRead(path string) ([]byte, error) {
	defer call.leave(call.enter(opFSRead))
	var data []byte
	err := call.inRoot("fs_read", path, false, func(root *os.Root, rel string, fc fsFence) error {
		f, err := openRead(root, rel)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := fc.object(f, rel); err != nil {
			return err
		}
		defer call.interruptReads(f)()
		data, err = io.ReadAll(io.LimitReader(f, hostapi.MaxFileSize+1))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if lerr := call.live("fs_read"); lerr != nil {
				return lerr
			}
		}
		if err != nil {
			return err
		}
		if len(data) > hostapi.MaxFileSize {
			return hostapi.Errorf(hostapi.CodeTooLarge, "fs_read", "%s is larger than %d bytes", path, hostapi.MaxFileSize)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// FSWrite implements hostapi.FS. The file is replaced atomically
// (replaceFile): a reader, or a crash, never sees it half-written.
func (call *Call) FSWrite(path string, data []byte) error {
	defer call.leave(call.enter(opFSWrite))
	if len(data) > hostapi.MaxFileSize {
		return hostapi.Errorf(hostapi.CodeTooLarge, "fs_write", "%d bytes is over the %d-byte limit", len(data), hostapi.MaxFileSize)
	}
	return call.inRoot("fs_write", path, true, func(root *os.Root, rel string, fc fsFence) error {
		return replaceFile(root, rel, data, fc)
	})
}

// FSStat implements hostapi.FS.
func (call *Call) FSStat(path string) (hostapi.FileInfo, error) {
	defer call.leave(call.enter(opFSStat))
	var fi fs.FileInfo
	err := call.inRoot("fs_stat", path, false, func(root *os.Root, rel string, fc fsFence) (err error) {
		if fc.on() {
			fi, err = fc.stat(root, rel)
		} else {
			fi, err = root.Stat(rel)
		}
		return err
	})
	if err != nil {
		return hostapi.FileInfo{}, err
	}
	return hostapi.FileInfo{Name: fi.Name(), Size: fi.Size(), IsDir: fi.IsDir(), Mode: uint32(fi.Mode()), ModTime: fi.ModTime()}, nil
}

// FSResolve implements hostapi.FS. It opens what path names under the
// granted root (so a symlink out of the root is refused as for a read) and
// asks the system where the open file lies, rather than joining strings:
// the path it returns is the very file the grant allowed, which is what an
// editor is then asked about.
func (call *Call) FSResolve(name string, write bool) (string, error) {
	defer call.leave(call.enter(opFSResolve))
	var real string
	err := call.inRoot("fs_resolve", name, write, func(root *os.Root, rel string, fc fsFence) error {
		f, err := openRead(root, rel)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := fc.object(f, rel); err != nil {
			return err
		}
		p, err := realPath(f, path.Join(fc.r.Dir, filepath.ToSlash(rel)))
		if err != nil {
			return hostapi.Errorf(hostapi.CodeNotSupported, "fs_resolve", "%s: %v", name, err)
		}
		real = filepath.FromSlash(p)
		return nil
	})
	if err != nil {
		return "", err
	}
	return real, nil
}

// FSList implements hostapi.FS.
func (call *Call) FSList(path string) ([]hostapi.DirEntry, error) {
	defer call.leave(call.enter(opFSList))
	var entries []fs.DirEntry
	err := call.inRoot("fs_list", path, false, func(root *os.Root, rel string, fc fsFence) error {
		f, err := openRead(root, rel)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := fc.object(f, rel); err != nil {
			return err
		}
		entries, err = f.ReadDir(-1)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]hostapi.DirEntry, len(entries))
	for i, e := range entries {
		out[i] = hostapi.DirEntry{Name: e.Name(), IsDir: e.IsDir()}
	}
	return out, nil
}

// FSMkdir implements hostapi.FS (one level; the parent must exist).
func (call *Call) FSMkdir(path string) error {
	defer call.leave(call.enter(opFSMkdir))
	return call.inRoot("fs_mkdir", path, true, func(root *os.Root, rel string, fc fsFence) error {
		dir, name, done, err := fc.parent(root, rel)
		if err != nil {
			return err
		}
		defer done()
		return dir.Mkdir(name, 0o755)
	})
}

// FSRemove implements hostapi.FS (a file or an empty directory).
func (call *Call) FSRemove(path string) error {
	defer call.leave(call.enter(opFSRemove))
	return call.inRoot("fs_remove", path, true, func(root *os.Root, rel string, fc fsFence) error {
		if rel == "." {
			return hostapi.Errorf(hostapi.CodeDenied, "fs_remove", "%s is a granted root and cannot be removed", path)
		}
		dir, name, done, err := fc.parent(root, rel)
		if err != nil {
			return err
		}
		defer done()
		return dir.Remove(name)
	})
}

// FSRename implements hostapi.FS. Both paths must be writable and fall under
// the same granted root (a move between roots is a copy the capsule makes).
func (call *Call) FSRename(from, to string) error {
	defer call.leave(call.enter(opFSRename))
	if err := call.live("fs_rename"); err != nil {
		return err
	}
	rf, err := call.gate().FSWrite(call.principal, from)
	if err != nil {
		return denied(err)
	}
	rt, err := call.gate().FSWrite(call.principal, to)
	if err != nil {
		return denied(err)
	}
	if rf.Dir != rt.Dir {
		return hostapi.Errorf(hostapi.CodeInvalid, "fs_rename", "%s and %s are under different granted roots", from, to)
	}
	if rf.Rel == "." || rt.Rel == "." {
		return hostapi.Errorf(hostapi.CodeDenied, "fs_rename", "a granted root cannot be renamed")
	}
	ff := fsFence{r: rf, capability: "fs_write", request: from}
	ft := fsFence{r: rt, capability: "fs_write", request: to}
	return call.c.withGranted("fs_rename", from, rf, func(root *os.Root) error {
		df, nf, donef, err := ff.parent(root, filepath.FromSlash(rf.Rel))
		if err != nil {
			return err
		}
		defer donef()
		dt, nt, donet, err := ft.parent(root, filepath.FromSlash(rt.Rel))
		if err != nil {
			return err
		}
		defer donet()
		return renameIn(df, nf, dt, nt)
	})
}
