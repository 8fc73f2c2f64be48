//go:build linux && !amd64 && !arm64

package sandbox

// No filter is written for this architecture: Probe reports seccomp as
// missing, and enforce mode refuses to start processes.
const (
	auditArch = 0
	x32Bit    = 0
)
