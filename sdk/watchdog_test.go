//go:build !wasip1

package sdk

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A watch not fed ends its context with a cause wrapping ErrStalled; one
// fed keeps it alive; Stop ends it as cancelled, not stalled.
func TestWatchdog(t *testing.T) {
	c := &Call{Host: &fakeHost{}}

	ctx, dog := c.Watch(10 * time.Millisecond)
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, ErrStalled) {
		t.Fatalf("cause %v", cause)
	}
	dog.Stop()

	ctx, dog = c.Watch(time.Hour)
	for range 100 {
		dog.Feed()
	}
	if ctx.Err() != nil {
		t.Fatalf("a fed watch ended: %v", context.Cause(ctx))
	}
	dog.Stop()
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) || errors.Is(cause, ErrStalled) {
		t.Fatalf("after Stop: cause %v", cause)
	}
}
