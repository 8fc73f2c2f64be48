//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Start cannot confine on this OS: enforce mode refuses to start (set
// [sandbox] mode = "off" to run unconfined).
func Start(cmd *exec.Cmd, p Policy) (func(), error) { return nil, Need(0) }

// Need says why processes cannot be confined here.
func Need(int) error {
	return fmt.Errorf("sandbox: confining processes is implemented on Linux only (this is %s): set [sandbox] mode = \"off\" in config.toml to run them unconfined", runtime.GOOS)
}

func landlockABI() int { return 0 }

// MinABI is the Landlock ABI confinement needs on Linux.
const MinABI = 6
