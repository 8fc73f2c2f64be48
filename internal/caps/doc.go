// Package caps owns capability tokens (issue 35 item 2, DESIGN §13): a
// standing approval — "this session", "always", or one an operator granted
// in advance — kept as a token naming its principal, the capsule and tool
// it covers, an optional argument pattern, when it was issued, when it
// expires and its id, signed with the host key (internal/hostkey).
//
// It owns the token format (Encode, Decode), where tokens are kept (the
// kernel's own store namespace of each principal: durable for "always" and
// granted tokens, volatile for "this session") and the decision whether a
// token stands: its signature verifies, it names the principal, capsule
// and tool it is kept under, it is not revoked, not expired and not issued
// in the future. A token that fails any of these is ignored and reported
// (Book.reportTokenEvent, the one place the audit chain will hook in).
//
// It must not ask anyone anything (capsules/approval and internal/host/ask
// do), must not create or load keys beyond taking the host key it is
// given, and must not decide who may mint: its callers check that
// (internal/host allows only tool_middleware holders; the CLI is the
// operator).
package caps
