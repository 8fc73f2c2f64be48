package wasm

import (
	"fmt"
	"os"
)

// ensurePrivateDir creates dir 0700 and refuses it when others can write
// to it: the cache holds native code the kernel will execute.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s is group- or world-writable (mode %#o); the cache holds code the kernel runs, so it must be writable only by its owner (chmod 700)", dir, perm)
	}
	return checkOwner(dir, fi)
}
