// Command astrid is the one binary of Astrid in Go: it checks, builds and runs
// capsules and talks to the kernel.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		var quiet exitError
		if !errors.As(err, &quiet) {
			fmt.Fprintln(os.Stderr, "astrid:", err)
		}
		os.Exit(exitCode(err))
	}
}
