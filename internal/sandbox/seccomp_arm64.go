//go:build linux

package sandbox

// auditArch is AUDIT_ARCH_AARCH64; arm64 has no second ABI to fence off.
const (
	auditArch = 0xc00000b7
	x32Bit    = 0
)
