// Package trap is a component that traps as it starts: its package
// initialiser panics, inside the module's _initialize. It is built only for
// GOOS=wasip1 (testdata is outside ./...).
package trap

import "github.com/astrid-go/astrid/sdk"

func init() {
	panic("trap component: refusing to start")
}

// New returns the capsule (never reached).
func New() *sdk.Capsule { return sdk.New("traps at start") }
