// Command astrid is the one binary of Astrid in Go: it checks, builds and runs
// capsules and talks to the kernel.
package main

import (
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		os.Exit(exitCode(err))
	}
}
