package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/toolclient"
)

// A failed call's exit status is what `astrid tool call --help` says,
// whatever wraps the cause.
func TestCallExitCodeFollowsTheHelp(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("tool read_file: %w", err) }
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"interrupted", wrap(context.Canceled), 130},
		{"timed out", wrap(context.DeadlineExceeded), 2},
		{"state database busy", wrap(store.ErrInUse), exitStoreBusy},
		{"nobody routes tool calls", wrap(toolclient.ErrNoRouter), 1},
		{"start refused over budget", wrap(dispatch.ErrNotAdmitted), 1},
		{"anything else", errors.New("publish refused"), 1},
	}
	for _, tt := range tests {
		if got := callExitCode(tt.err); got != tt.want {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.want)
		}
	}
}
