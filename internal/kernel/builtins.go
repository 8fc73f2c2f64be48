package kernel

import "github.com/astrid-go/astrid/sdk"

// Builtin is a capsule linked into the binary: its manifest and its code.
// The kernel imports none: cmd/astrid passes them in Options.Builtins.
type Builtin struct {
	Manifest []byte
	New      func() *sdk.Capsule
}
