//go:build unix

package host

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// nlink is the number of hard links to the file fi describes.
func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// sameDevice reports whether a and b lie on one file system.
func sameDevice(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}

// renameat renames from in directory df to to in directory dt.
func renameat(df *os.File, from string, dt *os.File, to string) error {
	cf, err := df.SyscallConn()
	if err != nil {
		return err
	}
	ct, err := dt.SyscallConn()
	if err != nil {
		return err
	}
	var rerr error
	err = cf.Control(func(ffd uintptr) {
		err := ct.Control(func(tfd uintptr) {
			rerr = unix.Renameat(int(ffd), from, int(tfd), to)
		})
		if rerr == nil {
			rerr = err
		}
	})
	if err != nil {
		return err
	}
	return rerr
}
