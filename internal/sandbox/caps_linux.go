package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// dropCapabilities empties the calling thread's bounding, ambient,
// inheritable, permitted and effective sets, so that a child run as root
// holds no capability either: root's execve gives it the bounding set
// (empty) and the inheritable one (empty). Landlock and the DAC still
// apply to uid 0 without capabilities. A thread without CAP_SETPCAP (an
// ordinary user) has nothing to drop and skips the bounding set.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capget: %w", err)
	}
	if data[0].Permitted|data[1].Permitted|data[0].Inheritable|data[1].Inheritable != 0 {
		for c := 0; c < 64; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				if errors.Is(err, unix.EINVAL) {
					break // past the kernel's last capability
				}
				return fmt.Errorf("sandbox: drop capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sandbox: clear ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capset: %w", err)
	}
	return nil
}
