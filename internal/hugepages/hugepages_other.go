//go:build !(linux && (amd64 || arm64))

package hugepages

// Installed reports whether large anonymous mappings made through
// golang.org/x/sys/unix get huge-page advice in this process: never on
// this platform.
func Installed() bool { return false }

// Advised is the number of mappings advised so far.
func Advised() uint64 { return 0 }
