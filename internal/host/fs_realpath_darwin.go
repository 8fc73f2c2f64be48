package host

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// realPath is where the open f lies, every symlink resolved, as the kernel
// names it (fcntl F_GETPATH). lexical, the path it was opened by, is unused
// here.
func realPath(f *os.File, lexical string) (string, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	buf := make([]byte, unix.PathMax)
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, unix.F_GETPATH, uintptr(unsafe.Pointer(&buf[0])))
	}); err != nil {
		return "", err
	}
	if errno != 0 {
		return "", errno
	}
	for i, b := range buf {
		if b == 0 {
			return string(buf[:i]), nil
		}
	}
	return "", errNoRealPath
}
