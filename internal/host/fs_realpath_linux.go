package host

import (
	"os"
	"strconv"
	"strings"
)

// realPath is where the open f lies, every symlink resolved, as the kernel
// names it (/proc/self/fd). lexical, the path it was opened by, is unused
// here.
func realPath(f *os.File, lexical string) (string, error) {
	// SyscallConn, not Fd: Fd would put the descriptor in blocking mode
	// and stop the deadlines that interrupt a read of a FIFO.
	rc, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var p string
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		p, rerr = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	}); err != nil {
		return "", err
	}
	if rerr != nil {
		return "", rerr
	}
	if !strings.HasPrefix(p, "/") {
		return "", errNoRealPath
	}
	return strings.TrimSuffix(p, " (deleted)"), nil
}
