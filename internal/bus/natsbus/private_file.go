package natsbus

import (
	"fmt"
	"io/fs"
)

// checkPrivateFile refuses a key file (what, at path, holding whose key)
// that is not a regular file or that group or others may read or write:
// a key others can read is no longer the operator's.
func checkPrivateFile(info fs.FileInfo, what, path, whose string) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s %s: not a regular file", what, path)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s %s: mode %04o lets others read %s; chmod 600 it", what, path, info.Mode().Perm(), whose)
	}
	return nil
}
