// Package hugepages asks the kernel for transparent huge pages on the
// large anonymous mappings wazero makes for machine code.
//
// wazero maps a module's compiled code (≈ 16 MiB for a Go capsule) with a
// plain anonymous mmap and then writes all of it, loading from the
// compilation cache as much as compiling. Where the kernel's THP mode is
// "madvise" (the common default) that is one page fault per 4 KiB, and on
// a virtual machine a fault can cost 10 µs or more: most of a capsule's
// cold start. wazero has no option for it, so this package wraps the mmap
// function golang.org/x/sys/unix maps through (its unexported mapper) and
// advises MADV_HUGEPAGE on every private anonymous mapping of 2 MiB or
// more, before the caller touches it.
//
// It owns only that advice. It must not change what a mapping is (address,
// size, protection, flags) nor fail a mapping the kernel granted: advice
// the kernel refuses is ignored. It reaches into x/sys's internals, so it
// installs itself only for x/sys versions whose mapper it was checked
// against (knownXSys); any other version leaves mappings alone, and a test
// fails until the new version's mapper is checked and listed.
package hugepages
