package kernel

import (
	"context"

	"github.com/astrid-go/astrid/internal/dispatch"
)

// frontendTarget is the dispatch target of a frontend identity
// (Options.Frontends): a frontend binds no interceptors, so it is never
// invoked; if it were, it would be skipped.
type frontendTarget struct{}

func (frontendTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}
