//go:build unix

package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockName is the lock file in the capsules directory; hidden, so never
// taken for a capsule.
const lockName = ".install.lock"

// dirLock is the held lock of a capsules directory.
type dirLock struct{ f *os.File }

// lockDir takes the capsules directory's lock, waiting up to wait for
// another holder (a process that died released it: flock locks end with
// their process).
func lockDir(dir string, wait time.Duration) (*dirLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("install: lock %s: %w", dir, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &dirLock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("install: %s: %w (waited %s; is one waiting for its confirmation?)", dir, ErrBusy, wait)
			}
			return nil, fmt.Errorf("install: lock %s: %w", dir, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unlock releases the lock; it is idempotent.
func (l *dirLock) unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}
