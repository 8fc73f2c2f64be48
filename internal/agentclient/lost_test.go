package agentclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
)

var errGone = errors.New("the daemon went away")

// goneKernel is a remote kernel whose connection ends: every subscription's
// Recv fails with errGone once gone is closed, as daemonclient's do.
type goneKernel struct{ gone chan struct{} }

func (goneKernel) Publish(dispatch.Caller, string, json.RawMessage) (dispatch.Result, error) {
	return dispatch.Result{}, nil
}

func (goneKernel) PublishRequest(dispatch.Caller, string, json.RawMessage, dispatch.Request) (dispatch.Result, error) {
	return dispatch.Result{}, nil
}

func (k goneKernel) Subscribe(dispatch.Caller, string, bool) (bus.Subscription, error) {
	return goneSub(k), nil
}

func (goneKernel) Interceptors(string) []string { return []string{"agent"} }
func (goneKernel) Logger() *slog.Logger         { return slog.Default() }

type goneSub goneKernel

func (s goneSub) Recv(ctx context.Context) (bus.Delivery, error) {
	select {
	case <-ctx.Done():
		return bus.Delivery{}, ctx.Err()
	case <-s.gone:
		return bus.Delivery{}, errGone
	}
}

func (goneSub) Close() {}

// A turn whose event stream ends under it (the daemon died) returns that
// error instead of waiting for events that cannot come.
func TestTurnEndsWhenItsEventsStop(t *testing.T) {
	k := goneKernel{gone: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := agentclient.Run(context.Background(), k, agentclient.Prompt{Principal: "default", SessionID: "s-1", Text: "hi"}, nil)
		done <- err
	}()
	close(k.gone)
	if err := <-done; !errors.Is(err, errGone) {
		t.Fatalf("Run after the events stopped: %v, want %v", err, errGone)
	}
}
