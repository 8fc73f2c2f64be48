package mcp

import "runtime"

// targetTriple names this host the way fat binary directories name their
// slices: the Rust target triple upstream bakes in at build time
// (x86_64-unknown-linux-gnu, aarch64-apple-darwin, …), derived here from the
// Go toolchain's GOOS and GOARCH.
func targetTriple() string { return tripleFor(runtime.GOOS, runtime.GOARCH) }

func tripleFor(goos, goarch string) string {
	arch := map[string]string{
		"amd64": "x86_64", "arm64": "aarch64", "386": "i686", "arm": "armv7",
		"riscv64": "riscv64gc", "ppc64le": "powerpc64le", "s390x": "s390x", "loong64": "loongarch64",
	}[goarch]
	if arch == "" {
		arch = goarch
	}
	switch goos {
	case "linux":
		if goarch == "arm" {
			return arch + "-unknown-linux-gnueabihf"
		}
		return arch + "-unknown-linux-gnu"
	case "darwin":
		return arch + "-apple-darwin"
	case "windows":
		return arch + "-pc-windows-msvc"
	default:
		return arch + "-unknown-" + goos
	}
}
