//go:build linux && (amd64 || arm64)

package hugepages

import (
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	_ "unsafe" // go:linkname

	"golang.org/x/sys/unix"
)

// xsysMapper mirrors golang.org/x/sys/unix's unexported mmapper in the
// versions listed in knownXSys (syscall_unix.go there).
type xsysMapper struct {
	sync.Mutex
	active map[*byte][]byte
	mmap   func(addr, length uintptr, prot, flags, fd int, offset int64) (uintptr, error)
	_      func(addr uintptr, length uintptr) error // munmap
}

//go:linkname mapper golang.org/x/sys/unix.mapper
var mapper *xsysMapper

// knownXSys are the x/sys versions whose mmapper has xsysMapper's layout.
var knownXSys = map[string]bool{"v0.50.0": true}

// threshold is the smallest mapping advised: one huge page.
const threshold = 2 << 20

var (
	installed bool
	advised   atomic.Uint64 // mappings advised, for tests and the log
)

func init() { installed = install() }

func install() bool {
	if !xsysChecked() || mapper == nil || mapper.mmap == nil || mapper.active == nil {
		return false
	}
	plain := mapper.mmap
	mapper.mmap = func(addr, length uintptr, prot, flags, fd int, offset int64) (uintptr, error) {
		p, err := plain(addr, length, prot, flags, fd, offset)
		if err == nil && length >= threshold && flags&unix.MAP_ANONYMOUS != 0 && flags&unix.MAP_PRIVATE != 0 {
			if _, _, errno := unix.Syscall(unix.SYS_MADVISE, p, length, unix.MADV_HUGEPAGE); errno == 0 {
				advised.Add(1)
			}
		}
		return p, err
	}
	return true
}

// xsysChecked reports whether the binary links an x/sys this package was
// checked against. A test binary carries no dependency list; the tests
// check go.mod's version instead.
func xsysChecked() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, d := range bi.Deps {
		if d.Path == "golang.org/x/sys" {
			if d.Replace != nil {
				return false
			}
			return knownXSys[d.Version]
		}
	}
	return len(bi.Deps) == 0
}

// Installed reports whether large anonymous mappings made through
// golang.org/x/sys/unix get huge-page advice in this process.
func Installed() bool { return installed }

// KernelSupported reports whether this kernel has transparent huge pages:
// without them the advice is refused (and ignored).
func KernelSupported() bool {
	_, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil
}

// Advised is the number of mappings advised so far.
func Advised() uint64 { return advised.Load() }
