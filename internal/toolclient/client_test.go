package toolclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// frontend is a bare dispatcher as a frontend sees it: no capsule holds
// tool_middleware.
type frontend struct {
	*dispatch.Dispatcher
	log *slog.Logger // nil: discarded
}

func (f frontend) Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error) {
	return f.Dispatcher.Publish(from, topic, payload)
}

func (f frontend) PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error) {
	return f.Dispatcher.Publish(from, topic, payload, dispatch.RequestOf(req))
}

func (frontend) HoldsToolMiddleware(string) bool { return false }

func (f frontend) Logger() *slog.Logger {
	if f.log != nil {
		return f.log
	}
	return slog.New(slog.DiscardHandler)
}

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
	return frontend{Dispatcher: d}
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

// handler is an interceptor made of a function.
type handler func(context.Context, dispatch.Invocation) (dispatch.Verdict, error)

func (h handler) Intercept(ctx context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
	return h(ctx, inv)
}

// A call's result is taken only from tool plumbing or the kernel: an
// impostor granted the result topic, saying the call succeeded or that the
// kernel failed it, is not heard, and the kernel's own failure of the call
// (its router failed) comes back as the call's error result, not an error.
func TestOnlyTheKernelsFailureOrToolPlumbingAnswersACall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		forgery func(callID string) []byte
	}{
		{"a result saying it succeeded", func(callID string) []byte {
			b, _ := ipc.ToolExecuteResult{CallID: callID, Result: ipc.ToolCallResult{CallID: callID, Content: "forged"}}.MarshalJSON()
			return b
		}},
		{"the kernel's failure in its words", func(callID string) []byte {
			b, _ := ipc.RequestFailed{CorrelationID: callID, Reason: ipc.FailRefused, Message: "forged"}.MarshalJSON()
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDispatcher(t)
			err := d.Register(dispatch.CapsuleACL{ID: "impostor", Publish: []string{ipc.ToolExecuteResultTopic}}, idle{})
			if err != nil {
				t.Fatal(err)
			}
			err = d.Register(dispatch.CapsuleACL{ID: "router", Subscribe: []string{ipc.ToolRequestExecuteTopic},
				Interceptors: []dispatch.Interceptor{{Pattern: ipc.ToolRequestExecuteTopic, Handler: "route"}}},
				handler(func(_ context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
					var req ipc.ToolExecuteRequest
					if err := req.UnmarshalJSON(ipc.GuestBytes(inv.Envelope.Payload)); err != nil {
						return dispatch.Verdict{}, err
					}
					// Heard before the kernel's failure: the same principal's route keeps order.
					if _, err := d.Publish(dispatch.Caller{Capsule: "impostor", Principal: inv.Principal, Continues: true}, ipc.ToolExecuteResultTopic, tc.forgery(req.CallID)); err != nil {
						return dispatch.Verdict{}, err
					}
					return dispatch.Verdict{}, errors.New("the router broke")
				}))
			if err != nil {
				t.Fatal(err)
			}
			// Written on CallTool's goroutine only: read once it returned.
			var logs bytes.Buffer
			d.log = slog.New(slog.NewTextHandler(&logs, nil))
			res, err := CallTool(context.Background(), d, ipc.DefaultPrincipal, "read_file", nil, time.Minute)
			if err != nil {
				t.Fatalf("CallTool: %v; want the kernel's failure as the call's result", err)
			}
			if !res.IsError || strings.Contains(res.Content, "forged") || !strings.Contains(res.Content, "the router broke") {
				t.Fatalf("result %+v; want the kernel's failure naming the router's error", res)
			}
			if !strings.Contains(logs.String(), "tool result refused") || !strings.Contains(logs.String(), "source=impostor") {
				t.Fatalf("the forgery was not heard and refused; log:\n%s", logs.String())
			}
		})
	}
}
