// Package grants owns the operator's approval of an installed capsule: the
// canonical record of what a manifest asks for (every capability entry and
// flag, [publish] and [subscribe] keys, interceptor patterns, MCP server
// commands, and the tools it promises to mark mutable), the comparison of a
// manifest against the record approved at install, and the record's place
// in the state database (internal/store's approvals namespace). Approve and
// Revoke record what they did in the system audit chain (internal/audit),
// signed with the host key, and fail when it cannot take it.
//
// Check is the one decision every load of an installed capsule goes
// through (internal/runtime calls it at boot, on Load, on the watcher's
// reload): no record, or a manifest asking for anything its record lacks,
// and the capsule does not load. Asking for less always loads.
//
// It must not ask anyone anything (the CLI confirms, then calls Approve),
// must not read capsule directories or load code, and must not judge
// whether a grant is wise: it only compares what was approved with what is
// asked, as written.
package grants
