package store

import (
	"fmt"
	"os"
)

// lockHolder describes who holds the lock on path, as precisely as the OS
// lets us know.
func lockHolder(path string) string {
	pid, ok := lockHolderPID(path)
	switch {
	case !ok:
		return "held by another process or another open in this one"
	case pid == os.Getpid():
		return fmt.Sprintf("already opened by this process (pid %d)", pid)
	}
	if name := processName(pid); name != "" {
		return fmt.Sprintf("held by process %d (%s)", pid, name)
	}
	return fmt.Sprintf("held by process %d", pid)
}
