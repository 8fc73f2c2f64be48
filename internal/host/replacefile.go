package host

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/hostapi"
)

// A file is replaced, never rewritten in place: the new content goes to a
// fresh file beside the target, which is then renamed over it. rename(2) is
// atomic within a directory, so a reader (or whatever is left after a kill -9
// or a power cut) sees the old content or the new one, never a prefix of
// either. Every step goes through the same os.Root as every other file
// operation, so neither the target nor the temporary file can be reached
// through a symlink that leads out of the granted directory.

// maxLinkHops bounds how many symlinks a target may go through before it is
// refused, as the kernel does (MAXSYMLINKS is 40 on Linux).
const maxLinkHops = 40

// tempAttempts bounds how many fresh temporary names are tried when one is
// taken. A name has 64 random bits, so a second attempt only ever follows a
// name someone planted.
const tempAttempts = 8

// replaceFile atomically replaces the file rel under root with data. An
// existing file keeps its permission bits; a new one gets 0644 minus the
// umask, as os.WriteFile would give it. A symlink at rel is followed while it
// stays inside root (the file it names is replaced and the link stays a
// link); one that leads out is refused, as opening it would be. Under a
// fence (fs_fence.go) the temporary file is made and renamed in the target's
// directory opened as a root of its own, once that directory is known to lie
// outside $ASTRID_HOME.
func replaceFile(root *os.Root, rel string, data []byte, fc fsFence) error {
	target, existing, err := resolveTarget(root, rel, "fs_write")
	if err != nil {
		return err
	}
	perm := fs.FileMode(0o644) // the umask applies at create
	if existing != nil {
		if !existing.Mode().IsRegular() {
			return hostapi.Errorf(hostapi.CodeInvalid, "fs_write", "%s is not a regular file (%v)", filepath.ToSlash(rel), existing.Mode().Type())
		}
		perm = 0o600 // until its mode is copied, no one else may open it
	}
	dir, target, done, err := fc.parent(root, target)
	if err != nil {
		return err
	}
	defer done()
	f, tmp, err := createTemp(dir, target, perm)
	if err != nil {
		return err
	}
	if err := fillTemp(f, data, existing); err != nil {
		_ = dir.Remove(tmp)
		return err
	}
	if err := dir.Rename(tmp, target); err != nil {
		_ = dir.Remove(tmp)
		return err
	}
	return nil
}

// fillTemp writes data to the new file, gives it the mode of the file it
// replaces, flushes it to disk and closes it. The flush comes before the
// rename: without it a file system may commit the rename before the data,
// and a power cut would leave the empty file this replacement exists to
// prevent.
func fillTemp(f *os.File, data []byte, existing fs.FileInfo) error {
	_, err := f.Write(data)
	if err == nil && existing != nil {
		// fchmod on the open file, not a path: nothing can be swapped in
		// between. Only the permission bits are kept; set-id bits are not
		// carried onto content the capsule wrote.
		err = f.Chmod(existing.Mode().Perm())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// createTemp creates a new file beside target with a random name. O_EXCL
// makes the create fail on any existing name, a planted symlink included
// (O_CREAT|O_EXCL never follows a final symlink), so what is opened is
// always a file this call made.
func createTemp(root *os.Root, target string, perm fs.FileMode) (*os.File, string, error) {
	dir, base := filepath.Split(target)
	var lastErr error
	for range tempAttempts {
		tmp := filepath.Join(dir, "."+base+".astrid-"+tempSuffix()+".tmp")
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
		lastErr = err
	}
	return nil, "", fmt.Errorf("no free temporary name beside %s: %w", target, lastErr)
}

// tempSuffix returns 64 random bits in hex; a variable so a test can make
// it predictable, as an attacker would like it to be.
var tempSuffix = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// resolveTarget follows a chain of symlinks at rel's last element inside
// root and returns the path of the file to replace and its info (nil when
// nothing is there yet). Directories along the way are resolved by os.Root
// itself. A link that leads out of root is refused; so is one whose lexical
// resolution does not name the file the link physically reaches (a relative
// link climbing out of a symlinked directory), since replacing another file
// than the one the link names would be wrong.
func resolveTarget(root *os.Root, rel, op string) (string, fs.FileInfo, error) {
	cur := filepath.Clean(rel)
	for range maxLinkHops {
		fi, err := root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return cur, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if cur != filepath.Clean(rel) {
				if err := sameAsFollowed(root, rel, op, fi); err != nil {
					return "", nil, err
				}
			}
			return cur, fi, nil
		}
		link, err := root.Readlink(cur)
		if err != nil {
			return "", nil, err
		}
		next, ok := linkInRoot(cur, link)
		if !ok {
			return "", nil, hostapi.Errorf(hostapi.CodeDenied, op, "%s leads outside the granted directory (symlink)", filepath.ToSlash(rel))
		}
		cur = next
	}
	return "", nil, hostapi.Errorf(hostapi.CodeInvalid, op, "%s: too many levels of symbolic links", filepath.ToSlash(rel))
}

// linkInRoot resolves link, read from the symlink at cur, to a path relative
// to the root and reports whether that path stays inside it. An absolute link
// never does: os.Root follows none (so reads through one fail too), whatever
// it names.
func linkInRoot(cur, link string) (string, bool) {
	if filepath.IsAbs(link) {
		return "", false
	}
	next := filepath.Join(filepath.Dir(cur), link)
	return next, filepath.IsLocal(next)
}

// sameAsFollowed checks that the file found by resolving rel's links
// lexically is the file os.Root reaches by following them.
func sameAsFollowed(root *os.Root, rel, op string, found fs.FileInfo) error {
	followed, err := root.Stat(rel)
	if err == nil && os.SameFile(followed, found) {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return hostapi.Errorf(hostapi.CodeInvalid, op, "%s is a symlink whose target cannot be resolved inside the granted directory; use the file it names", filepath.ToSlash(rel))
}
