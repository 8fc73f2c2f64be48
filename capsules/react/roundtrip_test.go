package react

import (
	"errors"
	"fmt"
	"testing"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Only a full queue means nothing ran and the prompt may be sent again; a
// timeout or a refusal may not be answered as "busy".
func TestNotTakenIsAFullQueueOnly(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{sdk.RequestFailedError{Failed: ipc.RequestFailed{Reason: ipc.FailQueueFull}}, true},
		{fmt.Errorf("session: %w", sdk.RequestFailedError{Failed: ipc.RequestFailed{Reason: ipc.FailQueueFull}}), true},
		{sdk.RequestFailedError{Failed: ipc.RequestFailed{Reason: ipc.FailTimeout}}, false},
		{sdk.RequestFailedError{Failed: ipc.RequestFailed{Reason: ipc.FailRefused}}, false},
		{errors.New("capsule already has 1 calls waiting (its queue is full)"), false},
		{nil, false},
	} {
		if got := notTaken(tt.err); got != tt.want {
			t.Errorf("notTaken(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
