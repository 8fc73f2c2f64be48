package sdktest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// sessionClientID is the frontend identity SessionPublish and SessionAsk
// use, as an orchestrator or frontend talking to the session store would.
const sessionClientID = "sdktest-session-client"

// sessionClientACL lets the test frontend send session requests and hear
// their scoped replies and the store's events, and nothing else.
func sessionClientACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        sessionClientID,
		Publish:   []string{"session.v1.append", "session.v1.request.*"},
		Subscribe: []string{"session.v1.response.*", "session.v1.event.*"},
	}
}

// SessionPublish publishes payload (marshalled to JSON; a json.RawMessage
// or string is used as is) on topic for principal, failing the test if no
// capsule handles the topic.
func (k *Kernel) SessionPublish(principal, topic string, payload any) {
	k.t.Helper()
	if _, err := k.sessionPublish(principal, topic, payload); err != nil {
		k.t.Fatalf("sdktest: publish %s: %v", topic, err)
	}
}

// SessionListen subscribes principal to pattern (say
// session.v1.response.*), for a test that publishes several requests and
// reads their replies in order. The route is closed when the test ends.
func (k *Kernel) SessionListen(principal, pattern string) *Replies {
	k.t.Helper()
	caller := dispatch.Caller{Capsule: sessionClientID, Principal: principal}
	sub, err := k.k.Dispatcher.Subscribe(caller, pattern, true)
	if err != nil {
		k.t.Fatalf("sdktest: subscribe %s: %v", pattern, err)
	}
	k.t.Cleanup(sub.Close)
	return &Replies{k: k, sub: sub}
}

// SessionAsk subscribes principal to reply, publishes payload on topic and
// returns the first message on reply (its topic and guest JSON), failing
// the test if none comes within k.Timeout.
func (k *Kernel) SessionAsk(principal, topic string, payload any, reply string) json.RawMessage {
	k.t.Helper()
	r := k.SessionListen(principal, reply)
	defer r.sub.Close()
	k.SessionPublish(principal, topic, payload)
	_, body := r.Next()
	return body
}

// Replies is a subscription of the session test frontend.
type Replies struct {
	k   *Kernel
	sub *bus.Route
}

// Next returns the next message's topic and guest JSON, failing the test
// if none comes within k.Timeout.
func (r *Replies) Next() (topic string, body json.RawMessage) {
	r.k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), r.k.Timeout)
	defer cancel()
	d, err := r.sub.Recv(ctx)
	if err != nil {
		r.k.t.Fatalf("sdktest: no reply: %v", err)
	}
	return d.Envelope.Topic, ipc.GuestBytes(d.Envelope.Payload)
}

func (k *Kernel) sessionPublish(principal, topic string, payload any) (int, error) {
	return k.publishAs(sessionClientID, principal, topic, payload)
}

// publishAs publishes payload on topic as test frontend client for
// principal and counts the interceptors that handled it (none is an error).
func (k *Kernel) publishAs(client, principal, topic string, payload any) (int, error) {
	var raw []byte
	switch p := payload.(type) {
	case json.RawMessage:
		raw = p
	case string:
		raw = []byte(p)
	default:
		b, err := json.Marshal(payload)
		if err != nil {
			return 0, err
		}
		raw = b
	}
	res, err := k.k.Frontend().Publish(dispatch.Caller{Capsule: client, Principal: principal}, topic, raw)
	if err != nil {
		return 0, err
	}
	if res.Interceptors == 0 {
		return 0, fmt.Errorf("no capsule handles %s", topic)
	}
	return res.Interceptors, nil
}
