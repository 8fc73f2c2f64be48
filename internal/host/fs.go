package host

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/gate"
)

// The gate decides lexically which granted root a path falls under; the I/O
// then goes through an os.Root opened on that root, so a symlink cannot lead
// out of it and there is no check-then-open race (DESIGN §4, Files).

func (call *Call) fsRoot(op, path string, write bool) (*os.Root, string, error) {
	if err := call.live(op); err != nil {
		return nil, "", err
	}
	var r gate.Root
	var err error
	if write {
		r, err = call.c.gate.FSWrite(call.principal, path)
	} else {
		r, err = call.c.gate.FSRead(call.principal, path)
	}
	if err != nil {
		return nil, "", hostapi.Errorf(hostapi.CodeDenied, "", "%v", err)
	}
	if strings.HasPrefix(r.Grant, "home://") {
		// A principal's home exists once something is granted in it.
		if err := os.MkdirAll(r.Base, 0o700); err != nil {
			return nil, "", hostapi.Errorf(hostapi.CodeIO, op, "create home: %v", err)
		}
	}
	root, err := openGranted(r)
	if err != nil {
		return nil, "", fsErr(op, path, err)
	}
	return root, filepath.FromSlash(r.Rel), nil
}

// openGranted opens the granted directory through its trusted base, so that
// a symlink planted where the granted directory should be (home://notes →
// /etc) cannot redirect the root itself.
func openGranted(r gate.Root) (*os.Root, error) {
	base, err := os.OpenRoot(r.Base)
	if err != nil {
		return nil, err
	}
	sub := r.Sub()
	if sub == "." || sub == "" {
		return base, nil
	}
	defer base.Close()
	return base.OpenRoot(filepath.FromSlash(sub))
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

// FSRead implements hostapi.FS.
func (call *Call) FSRead(path string) ([]byte, error) {
	root, rel, err := call.fsRoot("fs_read", path, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, fsErr("fs_read", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, hostapi.MaxFileSize+1))
	if err != nil {
		return nil, fsErr("fs_read", path, err)
	}
	if len(data) > hostapi.MaxFileSize {
		return nil, hostapi.Errorf(hostapi.CodeTooLarge, "fs_read", "%s is larger than %d bytes", path, hostapi.MaxFileSize)
	}
	return data, nil
}

// FSWrite implements hostapi.FS.
func (call *Call) FSWrite(path string, data []byte) error {
	if len(data) > hostapi.MaxFileSize {
		return hostapi.Errorf(hostapi.CodeTooLarge, "fs_write", "%d bytes is over the %d-byte limit", len(data), hostapi.MaxFileSize)
	}
	root, rel, err := call.fsRoot("fs_write", path, true)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.WriteFile(rel, data, 0o644); err != nil {
		return fsErr("fs_write", path, err)
	}
	return nil
}

// FSStat implements hostapi.FS.
func (call *Call) FSStat(path string) (hostapi.FileInfo, error) {
	root, rel, err := call.fsRoot("fs_stat", path, false)
	if err != nil {
		return hostapi.FileInfo{}, err
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	if err != nil {
		return hostapi.FileInfo{}, fsErr("fs_stat", path, err)
	}
	return hostapi.FileInfo{Name: fi.Name(), Size: fi.Size(), IsDir: fi.IsDir(), Mode: uint32(fi.Mode()), ModTime: fi.ModTime()}, nil
}

// FSList implements hostapi.FS.
func (call *Call) FSList(path string) ([]hostapi.DirEntry, error) {
	root, rel, err := call.fsRoot("fs_list", path, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, fsErr("fs_list", path, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fsErr("fs_list", path, err)
	}
	out := make([]hostapi.DirEntry, len(entries))
	for i, e := range entries {
		out[i] = hostapi.DirEntry{Name: e.Name(), IsDir: e.IsDir()}
	}
	return out, nil
}

// FSMkdir implements hostapi.FS (one level; the parent must exist).
func (call *Call) FSMkdir(path string) error {
	root, rel, err := call.fsRoot("fs_mkdir", path, true)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Mkdir(rel, 0o755); err != nil {
		return fsErr("fs_mkdir", path, err)
	}
	return nil
}

// FSRemove implements hostapi.FS (a file or an empty directory).
func (call *Call) FSRemove(path string) error {
	root, rel, err := call.fsRoot("fs_remove", path, true)
	if err != nil {
		return err
	}
	defer root.Close()
	if rel == "." {
		return hostapi.Errorf(hostapi.CodeDenied, "fs_remove", "%s is a granted root and cannot be removed", path)
	}
	if err := root.Remove(rel); err != nil {
		return fsErr("fs_remove", path, err)
	}
	return nil
}

// FSRename implements hostapi.FS. Both paths must be writable and fall under
// the same granted root (a move between roots is a copy the capsule makes).
func (call *Call) FSRename(from, to string) error {
	if err := call.live("fs_rename"); err != nil {
		return err
	}
	rf, err := call.c.gate.FSWrite(call.principal, from)
	if err != nil {
		return hostapi.Errorf(hostapi.CodeDenied, "", "%v", err)
	}
	rt, err := call.c.gate.FSWrite(call.principal, to)
	if err != nil {
		return hostapi.Errorf(hostapi.CodeDenied, "", "%v", err)
	}
	if rf.Dir != rt.Dir {
		return hostapi.Errorf(hostapi.CodeInvalid, "fs_rename", "%s and %s are under different granted roots", from, to)
	}
	if rf.Rel == "." || rt.Rel == "." {
		return hostapi.Errorf(hostapi.CodeDenied, "fs_rename", "a granted root cannot be renamed")
	}
	root, err := openGranted(rf)
	if err != nil {
		return fsErr("fs_rename", from, err)
	}
	defer root.Close()
	if err := root.Rename(filepath.FromSlash(rf.Rel), filepath.FromSlash(rt.Rel)); err != nil {
		return fsErr("fs_rename", from, err)
	}
	return nil
}
