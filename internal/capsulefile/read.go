package capsulefile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular is returned for a name that is a FIFO, a device, a socket or
// a directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned for a file over the caller's size limit.
var ErrTooLarge = errors.New("file too large")

// Read returns the content of name, a path relative to the capsule
// directory dir, if it is a regular file of at most max bytes inside dir.
// A symlink is followed only while it stays inside dir (os.Root); the open
// does not block (O_NONBLOCK), and the type and size are checked on the
// open file, so nothing can be swapped in between.
func Read(dir, name string, max int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open capsule directory: %w", err)
	}
	defer root.Close()
	return ReadIn(root, name, max)
}

// ReadIn is Read on an already opened capsule directory.
func ReadIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := open(root, name, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The size was checked, but a file may grow while it is read: read at
	// most one byte past the limit to notice.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: grew past %d bytes while read: %w", name, max, ErrTooLarge)
	}
	return data, nil
}

// Hash returns "sha256:<hex>" of name inside dir, streamed (no size limit:
// a regular file's size costs time, not memory), with Read's checks.
func Hash(dir, name string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("open capsule directory: %w", err)
	}
	defer root.Close()
	f, err := open(root, name, math.MaxInt64)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Stat returns the info of name inside dir, following symlinks only within
// dir; like Read, it refuses what is not a regular file.
func Stat(dir, name string) (fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open capsule directory: %w", err)
	}
	defer root.Close()
	fi, err := root.Stat(filepath.FromSlash(name))
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s (%v): %w", name, fi.Mode().Type(), ErrNotRegular)
	}
	return fi, nil
}

// open opens name for reading and checks that it is a regular file of at
// most max bytes.
func open(root *os.Root, name string, max int64) (*os.File, error) {
	f, err := root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s (%v): %w", name, fi.Mode().Type(), ErrNotRegular)
	}
	if fi.Size() > max {
		f.Close()
		return nil, fmt.Errorf("%s is %d bytes, larger than the %d-byte limit: %w", name, fi.Size(), max, ErrTooLarge)
	}
	return f, nil
}
