package host

import (
	"log/slog"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// maxUplinkSubscriptions bounds what an uplink's one service call holds
// open for all of its clients together (maxSubscriptionsPerCall is for a
// handler call).
const maxUplinkSubscriptions = 4096

var _ hostapi.Uplink = (*Call)(nil)

// Logger is the capsule's logger (engines log what their services do).
func (c *Capsule) Logger() *slog.Logger { return c.log }

// onBehalf checks that the capsule is an uplink and principal names a
// person, and returns the caller to act as.
func (call *Call) onBehalf(op, principal string) (dispatch.Caller, error) {
	if !call.c.uplink {
		return dispatch.Caller{}, hostapi.Errorf(hostapi.CodeDenied, op, "only an uplink capsule (capabilities.uplink = true) acts for another principal")
	}
	if principal == "" {
		return dispatch.Caller{}, hostapi.Errorf(hostapi.CodeInvalid, op, "a principal is required")
	}
	if err := dispatch.ValidatePrincipal(principal); err != nil {
		return dispatch.Caller{}, hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
	}
	if !call.c.actsForAnyone && (call.c.deps.UplinkActsFor == nil || !call.c.deps.UplinkActsFor(call.c.id, principal)) {
		return dispatch.Caller{}, hostapi.Errorf(hostapi.CodeDenied, op,
			"uplink %s may not act for principal %s: the operator names the principals an installed uplink acts for in config.toml, [uplink] acts_for = [\"%s=%s\"]",
			call.c.id, principal, call.c.id, principal)
	}
	if err := call.live(op); err != nil {
		return dispatch.Caller{}, err
	}
	return dispatch.Caller{Capsule: call.c.id, Principal: principal}, nil
}

// ActForAnyone lets a built-in uplink act for every principal: it decides
// itself who its clients are (the CLI uplink maps socket peers' uids,
// docs/uplink.md). The runtime calls it for built-ins only.
func (c *Capsule) ActForAnyone() { c.actsForAnyone = true }

// PublishAs implements hostapi.Uplink.
func (call *Call) PublishAs(principal, topic string, payload []byte) error {
	defer call.leave(call.enter(opPublish))
	const op = "publish_as"
	from, err := call.onBehalf(op, principal)
	if err != nil {
		return err
	}
	if _, err := call.c.deps.Dispatcher.Publish(from, topic, payload); err != nil {
		return hostapi.Errorf(codeOfDispatch(err), op, "%v", err)
	}
	return nil
}

// SubscribeAs implements hostapi.Uplink.
func (call *Call) SubscribeAs(principal, pattern string, accept func(payload []byte) bool) (hostapi.SubscriptionID, error) {
	defer call.leave(call.enter(opSubscribe))
	const op = "subscribe_as"
	from, err := call.onBehalf(op, principal)
	if err != nil {
		return 0, err
	}
	call.mu.Lock()
	n := len(call.subs)
	call.mu.Unlock()
	if n >= maxUplinkSubscriptions {
		return 0, hostapi.Errorf(hostapi.CodeTooLarge, op, "an uplink may hold at most %d subscriptions", maxUplinkSubscriptions)
	}
	var acceptEnv func(*ipc.Envelope) bool
	if accept != nil {
		acceptEnv = func(e *ipc.Envelope) bool { return accept(e.Payload) }
	}
	r, err := call.c.deps.Dispatcher.SubscribeAccepting(from, pattern, true, acceptEnv)
	if err != nil {
		return 0, hostapi.Errorf(codeOfDispatch(err), op, "%v", err)
	}
	return call.keep(op, r)
}

// keep records r as one of the call's subscriptions.
func (call *Call) keep(op string, r *bus.Route) (hostapi.SubscriptionID, error) {
	call.mu.Lock()
	defer call.mu.Unlock()
	if call.ended {
		r.Close()
		return 0, hostapi.Errorf(hostapi.CodeClosed, op, "the call has ended")
	}
	if call.subs == nil {
		call.subs = map[hostapi.SubscriptionID]*bus.Route{}
	}
	call.nextSub++
	call.subs[call.nextSub] = r
	return call.nextSub, nil
}

// isUplink reports whether the loaded capsule id holds the uplink grant.
func (c *Capsule) isUplink(id string) bool {
	if c.deps.Grants == nil {
		return false
	}
	caps, loaded := c.deps.Grants(id)
	return loaded && caps.Uplink
}
