package hostapi

// Uplink is what an uplink capsule ([capabilities] uplink = true, seed 003)
// needs to act for the people connected to it: it publishes and subscribes
// on behalf of the principal its peer maps to, never as itself. Only an
// uplink capsule may make these calls (CodeDenied otherwise); what it
// publishes and subscribes to is still checked against its own [publish]
// and [subscribe]. The native host offers it; a wasm guest does not yet
// (a host without it is not an uplink host).
type Uplink interface {
	// PublishAs publishes payload on topic for principal: the kernel
	// stamps the uplink's id as the source and principal as who the event
	// acts for. The principal's CPU budget admits it as new work.
	PublishAs(principal, topic string, payload []byte) error
	// SubscribeAs opens a subscription that receives only principal's
	// events on pattern. It is closed by Unsubscribe or when the call that
	// opened it ends.
	SubscribeAs(principal, pattern string) (SubscriptionID, error)
}

// GrantUplink is [capabilities] uplink, answered by HoldsGrant: a consumer
// that accepts answers only from frontends (the approval layer) also
// accepts them from an uplink relaying for the answer's own principal.
const GrantUplink = "uplink"

// MaxUplinkNetHandles caps an uplink capsule's open streams and listeners
// together, in place of MaxNetHandles: one listener and its clients.
const MaxUplinkNetHandles = 1024
