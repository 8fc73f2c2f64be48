package hostapi

// Uplink is what an uplink capsule ([capabilities] uplink = true, seed 003)
// needs to act for the people connected to it: it publishes and subscribes
// on behalf of the principal its peer maps to, never as itself. Only an
// uplink capsule may make these calls (CodeDenied otherwise); what it
// publishes and subscribes to is still checked against its own [publish]
// and [subscribe], and an installed uplink acts only for the principals the
// operator named ([uplink] acts_for). The native host and the wasm ABI
// (uplink_* imports) offer it; a host without it is not an uplink host.
type Uplink interface {
	// PublishAs publishes payload on topic for principal: the kernel
	// stamps the uplink's id as the source and principal as who the event
	// acts for. The principal's CPU budget admits it as new work.
	PublishAs(principal, topic string, payload []byte) error
	// SubscribeAs opens a subscription that receives only principal's
	// events on pattern and, when accept is not nil, only those whose
	// payload it returns true for. It is closed by Unsubscribe or when the
	// call that opened it ends. accept runs as each event is published, on
	// the publisher's goroutine, so an event it refuses is never queued for
	// the subscription nor wakes its reader (one principal's many clients
	// each see only their own turns' events at no cost to the others); it
	// must be quick, must not block or call the host, and must not keep the
	// payload.
	SubscribeAs(principal, pattern string, accept func(payload []byte) bool) (SubscriptionID, error)
	// OpenScope opens a request scope for principal (DESIGN §4a, §8): the
	// workspace and settings one client's requests carry. It returns the
	// scope's id, never 0, and the workspace as the host took it
	// (absolute, symlinks resolved). CodeInvalid when the host refuses
	// the workspace.
	OpenScope(principal string, s Scope) (id uint64, workspace string, err error)
	// CloseScope forgets a scope: work still running in it from then on
	// has no workspace and no overrides.
	CloseScope(id uint64)
	// PublishIn is PublishAs in scope id (0: none): every call the event
	// invokes, and all the work those calls publish, runs in it.
	PublishIn(principal string, scope uint64, topic string, payload []byte) error
	// RequestIn is PublishIn as a request (IPC.PublishRequest): the
	// answer, or the kernel's failure, comes on req.ReplyTo for
	// principal.
	RequestIn(principal string, scope uint64, topic string, payload []byte, req Request) error
}

// Scope is what a client's requests carry besides its principal: the
// directory the work acts on, and the provider settings from the client's
// environment, for its requests only.
type Scope struct {
	// Workspace is an absolute directory: `*` grants and relative paths
	// resolve there. Empty: the kernel's.
	Workspace string
	// Config fills a capsule's [env] values for work in this scope:
	// capsule id → key → value. A value the operator stored wins, as it
	// does in-process; a stored secret is withheld when the scope names
	// an endpoint the operator did not (its key would go to that
	// endpoint).
	Config map[string]map[string]string
	// PeerUID is the client's uid as the kernel saw it (SO_PEERCRED): a
	// workspace of another uid than the kernel's own must be a directory
	// that uid owns. -1: no peer to check.
	PeerUID int
}

// GrantUplink is [capabilities] uplink, answered by HoldsGrant: a consumer
// that accepts answers only from frontends (the approval layer) also
// accepts them from an uplink relaying for the answer's own principal.
const GrantUplink = "uplink"

// MaxUplinkNetHandles caps an uplink capsule's open streams and listeners
// together, in place of MaxNetHandles: one listener and its clients.
const MaxUplinkNetHandles = 1024
