package host

import (
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/manifest"
)

// HoldsGrant implements hostapi.Sys. It answers only about the grants that
// decide whether another capsule's content may be trusted, never about
// paths, hosts or secrets, so no capsule can read another's manifest
// through it.
func (call *Call) HoldsGrant(capsuleID, grant string) (bool, error) {
	defer call.leave(call.enter(opHoldsGrant))
	pick, ok := grantFlags[grant]
	if !ok {
		return false, hostapi.Errorf(hostapi.CodeInvalid, "holds_grant", "%q is not a grant this call answers about (%s, %s or %s)",
			grant, hostapi.GrantPromptInjection, hostapi.GrantToolMiddleware, hostapi.GrantUplink)
	}
	if call.c.deps.Grants == nil {
		return false, hostapi.Errorf(hostapi.CodeNotSupported, "holds_grant", "this host has no capsule registry")
	}
	caps, loaded := call.c.deps.Grants(capsuleID)
	return loaded && pick(caps), nil
}

// grantFlags are the grants HoldsGrant answers about, by name.
var grantFlags = map[string]func(manifest.Capabilities) bool{
	hostapi.GrantPromptInjection: func(c manifest.Capabilities) bool { return c.AllowPromptInjection },
	hostapi.GrantToolMiddleware:  func(c manifest.Capabilities) bool { return c.ToolMiddleware },
	hostapi.GrantUplink:          func(c manifest.Capabilities) bool { return c.Uplink },
}
