//go:build !(linux && (amd64 || arm64))

package hugepages

// Installed reports whether large anonymous mappings made through
// golang.org/x/sys/unix get huge-page advice in this process: never on
// this platform.
func Installed() bool { return false }

// Advised is the number of mappings advised so far.
func Advised() uint64 { return 0 }

// KernelSupported reports whether this kernel has transparent huge pages:
// not as far as this package knows, on this platform.
func KernelSupported() bool { return false }
