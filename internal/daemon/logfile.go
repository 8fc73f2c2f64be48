package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Defaults of the log file's rotation.
const (
	DefaultLogMaxBytes = 10 << 20
	DefaultLogKeep     = 3
)

// rotatingFile is the daemon's log file: appended to, and once it reaches
// maxBytes renamed to path.1 (path.1 to path.2, ..., the oldest beyond keep
// deleted) and started afresh, so the logs of a daemon that runs for months
// stay bounded at (keep+1)·maxBytes.
type rotatingFile struct {
	path     string
	maxBytes int64
	keep     int

	mu   sync.Mutex
	f    *os.File
	size int64
}

func openRotating(path string, maxBytes int64, keep int) (*rotatingFile, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultLogMaxBytes
	}
	if keep <= 0 {
		keep = DefaultLogKeep
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	r := &rotatingFile{path: path, maxBytes: maxBytes, keep: keep}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// open opens (or creates) the current file; the caller holds mu or owns r.
func (r *rotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("log file: %w", err)
	}
	r.f, r.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past its
// size. A log record is one Write, so a record is never split across files.
func (r *rotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			// Keep logging into the current file rather than lose records.
			fmt.Fprintf(os.Stderr, "astrid daemon: log rotation failed: %v\n", err)
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate shifts the files by one; the caller holds mu.
func (r *rotatingFile) rotate() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	r.f = nil
	_ = os.Remove(fmt.Sprintf("%s.%d", r.path, r.keep))
	for i := r.keep - 1; i >= 1; i-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", r.path, i), fmt.Sprintf("%s.%d", r.path, i+1))
	}
	renameErr := os.Rename(r.path, r.path+".1")
	if err := r.open(); err != nil {
		return err
	}
	return renameErr
}

// Close closes the file.
func (r *rotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
