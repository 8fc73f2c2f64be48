package kernel

import (
	"context"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/sdk"
)

// Builtin is a capsule linked into the binary: its manifest and its code.
// The kernel imports none: cmd/astrid passes them in Options.Builtins.
type Builtin struct {
	Manifest []byte
	New      func() *sdk.Capsule
}

// frontendTarget is the dispatch target of a frontend identity
// (Options.Frontends): a frontend binds no interceptors, so it is never
// invoked; if it were, it would be skipped.
type frontendTarget struct{}

func (frontendTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}
