// Package ledger is the kernel's one CPU ledger (DESIGN §4): every engine
// charges a call's guest time (its wall time minus the time spent inside
// host calls) to the invoking principal, and the ledger answers whether a
// principal may start another call under its per-second budget.
//
// It measures nothing itself and stops nothing: engines report, and refuse
// a call the ledger does not admit.
package ledger
