package toolclient

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// frontend is a bare dispatcher as a frontend sees it: no capsule holds
// tool_middleware.
type frontend struct{ *dispatch.Dispatcher }

func (f frontend) Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error) {
	return f.Dispatcher.Publish(from, topic, payload)
}

func (f frontend) PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error) {
	return f.Dispatcher.Publish(from, topic, payload, dispatch.RequestOf(req))
}

func (frontend) HoldsToolMiddleware(string) bool { return false }

func (frontend) Logger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func (f frontend) Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error) {
	return f.Dispatcher.Subscribe(from, pattern, scoped)
}

// newDispatcher is a dispatcher with the client's identity registered, as
// the kernel registers Options.Frontends, and no capsule.
func newDispatcher(t *testing.T) frontend {
	t.Helper()
	b := bus.New(bus.Options{})
	d := dispatch.New(b, dispatch.Options{})
	t.Cleanup(func() { d.Close(); b.Close() })
	if err := d.Register(ACL(), idle{}); err != nil {
		t.Fatal(err)
	}
	return frontend{d}
}

type idle struct{}

func (idle) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}

func TestNoRouterIsReportedBeforeAnyPublish(t *testing.T) {
	d := newDispatcher(t)
	_, err := CallTool(context.Background(), d, ipc.DefaultPrincipal, "read_file", nil, time.Minute)
	if !errors.Is(err, ErrNoRouter) {
		t.Fatalf("err = %v, want ErrNoRouter", err)
	}
}

func TestListToolsWithNoDescriberEndsAtOnce(t *testing.T) {
	d := newDispatcher(t)
	// A window far longer than the test: the list must end because nobody
	// is waited for, not because the window passed.
	tools, missing, err := ListTools(context.Background(), d, ipc.DefaultPrincipal, time.Hour)
	if err != nil || len(tools) != 0 || len(missing) != 0 {
		t.Fatalf("ListTools = %v, %v, %v; want nothing", tools, missing, err)
	}
}

func TestTheClientIdentityMayNotPublishOutsideTheToolConvention(t *testing.T) {
	d := newDispatcher(t)
	caller := dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal}
	if _, err := d.Publish(caller, "kv.v1.request.set", []byte(`{}`)); err == nil {
		t.Fatal("the CLI's identity published outside its ACL")
	}
}

func TestCallIDsAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewCallID()
		if seen[id] || len(id) != len("call_")+32 {
			t.Fatalf("call id %q repeated or malformed", id)
		}
		seen[id] = true
	}
}
