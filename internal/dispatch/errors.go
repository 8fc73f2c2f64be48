package dispatch

import "errors"

// Errors returned by the dispatcher. Each is wrapped with context naming the
// capsule, topic and rule involved; test with errors.Is.
var (
	// ErrDenied: the capsule's manifest ACL does not allow the publish or
	// subscription.
	ErrDenied = errors.New("denied by ACL")
	// ErrRateLimited: the (capsule, principal) token bucket is empty.
	ErrRateLimited = errors.New("rate limited")
	// ErrNotAdmitted: a publish that starts work (Caller.Continues unset)
	// was refused by Options.Admit, e.g. for a principal over its CPU
	// budget; the error wraps Admit's reason.
	ErrNotAdmitted = errors.New("not admitted")
	// ErrInvalidPrincipal: the principal is not a valid principal id, so the
	// event cannot be attributed and is not dispatched.
	ErrInvalidPrincipal = errors.New("unresolvable principal")
	// ErrInvalidPayload: the payload is not one JSON value in UTF-8.
	ErrInvalidPayload = errors.New("payload is not valid UTF-8 JSON")
	// ErrInvalidSource: an envelope from another host claims a source no
	// capsule may have (the kernel's id).
	ErrInvalidSource = errors.New("invalid source")
	// ErrUnknownCapsule: the caller is not a registered capsule.
	ErrUnknownCapsule = errors.New("capsule not registered")
	// ErrRegistration: a CapsuleACL was refused by Register.
	ErrRegistration = errors.New("invalid registration")
	// ErrClosed: the dispatcher has been closed.
	ErrClosed = errors.New("dispatcher closed")
	// ErrNotSupported is returned by a Target none of whose engines supports
	// the call; the dispatcher skips that link instead of counting a Deny.
	ErrNotSupported = errors.New("interceptor not supported by any engine")
)
