//go:build unix

package wasm

import (
	"fmt"
	"os"
	"syscall"
)

func checkOwner(dir string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by uid %d, not this process's uid %d", dir, st.Uid, os.Getuid())
	}
	return nil
}
