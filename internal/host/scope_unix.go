//go:build unix

package host

import (
	"os"
	"syscall"
)

// ownerOf is the uid owning the file fi describes.
func ownerOf(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
