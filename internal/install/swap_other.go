//go:build !linux

package install

import (
	"fmt"
	"os"
)

// exchange swaps a and b with two renames (no atomic exchange here): for
// a moment b does not exist, so a kernel booting just then misses the
// capsule until the next boot or watcher scan.
func exchange(a, b string) error {
	tmp := a + ".swap"
	if err := os.Rename(b, tmp); err != nil {
		return fmt.Errorf("exchange %s and %s: %w", a, b, err)
	}
	if err := os.Rename(a, b); err != nil {
		_ = os.Rename(tmp, b)
		return fmt.Errorf("exchange %s and %s: %w", a, b, err)
	}
	if err := os.Rename(tmp, a); err != nil {
		return fmt.Errorf("exchange %s and %s: %w", a, b, err)
	}
	return nil
}
