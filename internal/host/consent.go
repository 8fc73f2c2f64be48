package host

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/egress"
)

// Local-egress consent (issue 36 item 6): a capsule's connection to a
// loopback or private address that its `net` / `net_connect` grant names
// but the operator's [egress] allow does not is put to the person, as an
// approval question (action ConsentAction, resource "host:port"): once,
// this session or always for this capsule and principal, like any approval.
// With no frontend to ask it is refused. Questions about one target from
// one capsule and principal are asked once at a time: a flood of
// connections waits for that one answer.

// ConsentAction is the approval question's action.
const ConsentAction = "connect to a local address"

// consents coalesces the consent questions of one capsule.
type consents struct {
	mu       sync.Mutex
	inflight map[consentKey]*consentWait
}

type consentKey struct{ principal, target string }

type consentWait struct {
	done chan struct{}
	err  error
}

// egressCtx is the call's context with the person's consent attached, for
// the dials HTTPDo and NetConnect make.
func (call *Call) egressCtx() context.Context {
	return egress.WithLocalConsent(call.ctx, call.localConsent)
}

// localConsent asks the person whether the capsule may reach target (its
// local addresses addrs), once per (principal, target) at a time.
func (call *Call) localConsent(_ context.Context, target string, addrs []netip.Addr) error {
	c := call.c
	k := consentKey{call.principal, target}
	c.consent.mu.Lock()
	if w := c.consent.inflight[k]; w != nil {
		c.consent.mu.Unlock()
		select {
		case <-w.done:
			return w.err
		case <-call.ctx.Done():
			return context.Cause(call.ctx)
		}
	}
	if c.consent.inflight == nil {
		c.consent.inflight = map[consentKey]*consentWait{}
	}
	w := &consentWait{done: make(chan struct{})}
	c.consent.inflight[k] = w
	c.consent.mu.Unlock()

	w.err = call.askConsent(target, addrs)
	c.consent.mu.Lock()
	delete(c.consent.inflight, k)
	c.consent.mu.Unlock()
	close(w.done)
	return w.err
}

func (call *Call) askConsent(target string, addrs []netip.Addr) error {
	deps := call.c.deps
	fix := fmt.Sprintf("the operator may allow it for every capsule in config.toml, [egress] allow = [%q]", target)
	if deps.Approvals == nil || deps.Bus == nil || deps.Store == nil {
		return fmt.Errorf("%s %s (%v) is a local address and there is no one to ask: %s", call.c.id, target, addrs, fix)
	}
	ok, err := deps.Approvals.Request(call.asker(), deps.Store, ConsentAction, target)
	switch {
	case err != nil && hostapi.CodeOf(err) == hostapi.CodeTimeout:
		return fmt.Errorf("nobody answered whether %s may connect to the local address %s: %s", call.c.id, target, fix)
	case err != nil:
		return fmt.Errorf("the person was not asked whether %s may connect to the local address %s (%v): %s", call.c.id, target, err, fix)
	case !ok:
		return fmt.Errorf("the person did not allow %s to connect to the local address %s", call.c.id, target)
	}
	return nil
}
