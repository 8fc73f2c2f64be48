// Package approval is the built-in approval layer (seed 000, DESIGN §5a,
// spec/capsules-cli.md §5.5): before a tool that changes things (mutable)
// runs, the person is asked, and the call goes on only if they agree.
//
// It intercepts tool.v1.request.execute at priority 10, ahead of the router
// (100), holding tool_middleware (DESIGN §4c):
//   - a read-only tool, an unknown tool (no provider: the router answers
//     its own error), a call with an allowance, the one re-publish of an
//     approved call, and a tool that asks the person itself per call (its
//     provider's manifest says asks_approval; the shell asks for each
//     command) pass at once (Continue);
//   - any other call of a mutable tool is kept in volatile KV and asked
//     about on astrid.v1.approval as approval_required{request_id, action
//     (the tool), resource (its arguments, truncated visibly past 1024
//     bytes), reason (the providing capsule, and that it changes things),
//     call_id}; the handler answers Final and returns. It never waits for
//     the person: a capsule's calls for one principal run one at a time, so
//     a blocked handler would hold up every other tool call of that
//     principal.
//
// Answers arrive on astrid.v1.approval.response.<request_id> (an
// interceptor that always Continues, so the orchestrator sees them too):
//   - approve, approve_session, approve_always: the original request is
//     published again on tool.v1.request.execute with a one-shot pass for
//     that call id, so it goes through to the router;
//   - deny (or any other decision): an is_error result "<tool> was not
//     approved by the user" is published on tool.v1.execute.result.
//
// A question not answered within approval_timeout_secs ([env], 300 s) is
// refused the same way ("… no answer within N s"), checked on the kernel's
// per-principal astrid.v1.watchdog.tick. A cancel (tool.v1.request.cancel)
// withdraws the question of that call: a later approval runs nothing.
//
// Who may answer: only a frontend named in [env] approvers (default
// astrid-cli; the kernel stamps source ids and reserves frontend ids
// against capsules), and only for its own principal: every record lives in
// the invoking principal's KV, so an answer published for another
// principal finds nothing. An unknown or already settled request id is
// ignored.
//
// Allowances are capability tokens (DESIGN §13, internal/caps) per
// principal and per (providing capsule, tool), the thing the person was
// asked about: once (nothing kept), session (until this kernel process
// stops, or the capsule is unloaded for good) and always (kept in the
// store until revoked). The kernel mints them on this capsule's behalf
// (hostapi.Capabilities, signed with the host key) and checks each on
// every call, so `astrid caps revoke` counts at once and a token edited
// on disk is ignored. An operator may grant one in advance (`astrid caps
// grant`), optionally for arguments matching a pattern.
//
// The mutable and asks_approval flags come from sdk.DescribeTools (stamped
// by the kernel from the manifest's [[tool]] entries: mutable if the
// manifest or the code says so, asks_approval only if the manifest does),
// cached in volatile KV for
// the set of capsules that answer describe, cleared on
// astrid.v1.capsules_loaded and re-read at most a minute later by every
// principal. A tool described by any capsule but its provider, or not
// described at all, is treated as mutable and asked about: another
// capsule's asks_approval counts for nothing.
//
// It owns the questions and the allowances only: it publishes nothing on
// tool.v1.execute.result but the refusals of calls it held, forwards
// nothing to a provider itself (the router does), starts no goroutines and
// keeps no state outside KV and the kernel's tokens.
package approval
