package host

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/gate"
)

// $ASTRID_HOME is never inside a grant (DESIGN §4a). The gate refuses a
// request whose path lies in it; this file refuses what a path reaches
// there without naming it. An os.Root on the workspace keeps symlinks inside
// the workspace, and with the default home in a workspace of ~ that is not
// enough: ./notes → .astrid/secrets.key stays inside. So for every root that
// carries a fence (gate.Root.Fence: all but home:// and cwd://) the host
// checks what it actually opened, not the path it was given:
//
//   - a read or a listing: the real path of the open file or directory (the
//     kernel's, from the descriptor: /proc/self/fd on Linux, F_GETPATH on
//     macOS), so no symlink, ".." in a link or /proc/self/root spelling and
//     no swap between check and use can lead into the home; and, for a
//     regular file with more than one link, whether it is a hard link to a
//     file near the top of the home (below);
//   - a write, mkdir, remove or rename: the real path of the directory the
//     last step happens in, opened as its own os.Root and checked before
//     anything is created there, so the step itself works on one name in
//     a directory known to lie outside the home;
//   - a stat: the directory of the file the symlinks at its end lead to,
//     checked the same way, and the file's own metadata taken there (a
//     directory is opened and checked itself).
//
// Hard links cannot be told apart from the file they name. Writes to the
// home are refused, so a capsule cannot make one through the host; a link
// made by someone else (or by an unconfined process) into the workspace is
// caught for the files directly in the home or one directory below it
// (secrets.key, config.toml, state.db, run/…), when the file has more than
// one link and sits on the home's device.

// fsFence is one request's fence: the root the gate chose, and what to say
// when something under it reaches the home.
type fsFence struct {
	r          gate.Root
	capability string // "fs_read" or "fs_write"
	request    string // the path as the capsule sent it
}

// on reports whether the root carries a fence.
func (fc fsFence) on() bool { return len(fc.r.Fence()) > 0 }

// denied turns a gate denial into the host's error.
func denied(err error) error {
	return hostapi.Errorf(hostapi.CodeDenied, "", "%v", err)
}

// object checks the open file or directory f, found at rel below the
// granted directory.
func (fc fsFence) object(f *os.File, rel string) error {
	if !fc.on() {
		return nil
	}
	real, err := realPath(f, path.Join(fc.r.Dir, filepath.ToSlash(rel)))
	if err != nil {
		return hostapi.Errorf(hostapi.CodeDenied, "", "%s denied: %s: where it lies cannot be checked (%v), and %s", fc.capability, fc.request, err, strings.TrimPrefix(gate.HomeReason, "lies in "))
	}
	if err := fc.r.CheckReached(fc.capability, fc.request, real); err != nil {
		return denied(err)
	}
	return fc.hardLinked(f)
}

// maxLinkScan bounds the entries looked at for a hard link into the home.
const maxLinkScan = 4096

// hardLinked refuses a regular file with several links that is the same
// file as one directly in a fenced directory or one level below it.
func (fc fsFence) hardLinked(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || nlink(fi) < 2 {
		return nil
	}
	var seen []fs.FileInfo
	for _, dir := range fc.r.Fence() {
		di, err := os.Stat(filepath.FromSlash(dir))
		if err != nil || !sameDevice(fi, di) || containsSame(seen, di) {
			continue
		}
		seen = append(seen, di)
		if p := findSame(filepath.FromSlash(dir), fi, 1, new(int)); p != "" {
			return denied(fc.r.CheckReached(fc.capability, fc.request, filepath.ToSlash(p)))
		}
	}
	return nil
}

func containsSame(list []fs.FileInfo, fi fs.FileInfo) bool {
	for _, x := range list {
		if os.SameFile(x, fi) {
			return true
		}
	}
	return false
}

// findSame looks in dir (and depth levels below it) for a regular file that
// is target, and returns its path.
func findSame(dir string, target fs.FileInfo, depth int, budget *int) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if *budget++; *budget > maxLinkScan {
			return ""
		}
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type().IsRegular():
			if fi, err := os.Lstat(p); err == nil && os.SameFile(fi, target) {
				return p
			}
		case e.IsDir() && depth > 0:
			if found := findSame(p, target, depth-1, budget); found != "" {
				return found
			}
		}
	}
	return ""
}

// parent opens the directory rel lies in as a root of its own and checks
// where it really is, so that the last step of a write (one name created,
// replaced, renamed or removed) happens in a directory known to lie outside
// the fence. It returns that root, rel's last element, and what to call when
// done. Without a fence it returns root and rel unchanged.
func (fc fsFence) parent(root *os.Root, rel string) (*os.Root, string, func(), error) {
	if !fc.on() {
		return root, rel, func() {}, nil
	}
	dir, name := filepath.Split(rel)
	dir = strings.TrimSuffix(dir, string(filepath.Separator))
	pr, done := root, func() {}
	if dir != "" {
		sub, err := root.OpenRoot(dir)
		if err != nil {
			return nil, "", nil, err
		}
		pr, done = sub, func() { sub.Close() }
	} else {
		dir = "."
	}
	d, err := pr.Open(".")
	if err == nil {
		err = fc.object(d, dir)
		d.Close()
	}
	if err != nil {
		done()
		return nil, "", nil, err
	}
	return pr, name, done, nil
}

// statFenced is Stat for a fenced root: the symlinks at rel's end are
// followed inside root (resolveTarget), the directory the file lies in is
// checked (parent), and the metadata is taken there, on one name.
func (fc fsFence) stat(root *os.Root, rel string) (fs.FileInfo, error) {
	target, _, err := resolveTarget(root, rel, "fs_stat")
	if err != nil {
		return nil, err
	}
	pr, name, done, err := fc.parent(root, target)
	if err != nil {
		return nil, err
	}
	defer done()
	fi, err := pr.Lstat(name)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, hostapi.Errorf(hostapi.CodeIO, "fs_stat", "%s changed while it was being checked", fc.request)
	}
	if fi.IsDir() {
		// The home itself, or a directory in it, reached by a link whose
		// parent lies outside: checked as itself.
		d, err := pr.Open(name)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		if err := fc.object(d, target); err != nil {
			return nil, err
		}
		if fi, err = d.Stat(); err != nil {
			return nil, err
		}
	}
	return fi, nil
}

// renameIn renames from (in dir rf) to to (in dir rt). In one directory
// it is that root's Rename; across two it is renameat(2) on the two open,
// checked directories, so neither can be swapped for a symlink between the
// check and the rename.
func renameIn(rf *os.Root, from string, rt *os.Root, to string) error {
	if rf == rt {
		return rf.Rename(from, to)
	}
	df, err := rf.Open(".")
	if err != nil {
		return err
	}
	defer df.Close()
	dt, err := rt.Open(".")
	if err != nil {
		return err
	}
	defer dt.Close()
	err = renameat(df, from, dt, to)
	if err != nil {
		return &os.LinkError{Op: "renameat", Old: from, New: to, Err: err}
	}
	return nil
}

var errNoRealPath = errors.New("this system cannot name an open file's path")
