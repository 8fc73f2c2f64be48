// Package ask asks a person on behalf of a host call (DESIGN §4, spec
// §5.5): the approval call's questions and its standing allowances ("this
// session" ones held here, "always" ones in the store under the kernel's
// reserved namespace), the elicit call's questions checked and their
// answers fitted, and the one broker both go through — a question
// published as the kernel for the call's principal, answered only by the
// kernel's frontends (or an uplink relaying its person), within a window,
// ended with the call.
//
// It owns the kernel-wide state of those calls (Approvals, Elicits) and
// nothing of a capsule: internal/host implements the hostapi methods,
// checks the call is live and fills an Asker from it. It must not trust a
// capsule for who is asked or who answered (both come from the Asker and
// the bus's stamps), must not count an answer from a source that is not a
// frontend or an uplink, and must not keep an allowance wider than what
// the person was asked about.
package ask
