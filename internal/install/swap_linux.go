package install

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// exchange swaps the directory entries a and b in one step (renameat2
// RENAME_EXCHANGE): whoever looks at either path sees the old entry or the
// new one, never neither. Whatever b was (a directory, a symlink planted
// there), only the entry moves: nothing is written through it.
func exchange(a, b string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		return fmt.Errorf("exchange %s and %s: %w", a, b, err)
	}
	return nil
}
