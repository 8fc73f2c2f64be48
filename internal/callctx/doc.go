// Package callctx owns the context of one handler call: the parent's
// values, a deadline, and cancellation with a cause by the deadline, the
// parent, or the call's owner (its cancel key, its end). It must not know
// what a call does: the host layer and the engines decide when to cancel.
//
// One Context replaces the stack a call used to carry (a deadline context,
// a cancel-cause context under it and an engine's AfterFunc under that):
// it registers once with its parent, makes its done channel only when
// asked for it, and runs AfterFunc callbacks from its own list.
package callctx
