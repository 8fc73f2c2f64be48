// Package principals owns the agents an operator creates (issue 35 item 3,
// DESIGN §13): a principal with its own limits — the capsules it may use
// (none listed: all), whether it is read-only (never offered, and never
// allowed, a mutable tool), its CPU budget per second and its LLM tokens
// per day — kept in the kernel's own store namespace, one record a name.
//
// It owns the record, its validation (names are principal ids: no path
// characters, so a name is never a path) and where it is kept. It must
// not enforce the limits itself: the kernel hands them to the capsules
// that offer and gate tools (hostapi.Capabilities.AgentPolicy) and to the
// CPU ledger.
package principals
