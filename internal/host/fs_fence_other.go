//go:build !unix

package host

import (
	"io/fs"
	"os"
	"path/filepath"
)

func nlink(fs.FileInfo) uint64 { return 1 }

func sameDevice(a, b fs.FileInfo) bool { return false }

// renameat renames by path: this system has no renameat here.
func renameat(df *os.File, from string, dt *os.File, to string) error {
	return os.Rename(filepath.Join(df.Name(), from), filepath.Join(dt.Name(), to))
}
