//go:build unix

package testutil

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// PidFile waits up to guard for the file at path (a child writes it to a
// temporary name and renames it, so it is never seen half-written) and
// returns the process ids it lists.
func PidFile(t testing.TB, guard time.Duration, path string) []int {
	t.Helper()
	var pids []int
	WaitFor(t, guard, path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s: %q is not a pid", path, f)
			}
			pids = append(pids, pid)
		}
		return len(pids) > 0
	})
	return pids
}

// NoProcess fails t for every pid that still names a process (kill -0
// answers anything but ESRCH; a zombie counts as remaining, since nobody
// reaped it).
func NoProcess(t testing.TB, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d remains (kill -0: %v)", pid, err)
		}
	}
}
