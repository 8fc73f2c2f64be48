// Package host implements hostapi, the syscall table, once for every engine.
// A Capsule binds one loaded capsule's identity, manifest ACL (through the
// dispatcher), capability gate, egress client and store namespaces; Begin
// opens a Call bound to one invoking principal, which is the hostapi.Host the
// capsule's handler sees.
//
// Every check happens here or below (internal/gate, internal/egress,
// internal/dispatch); engines are adapters and re-implement none of them. The
// host never trusts a capsule for its own identity: source and principal are
// stamped from the Call, never taken from the capsule.
//
// Every hostapi.Host method of a Call goes through one wrapper (methods.go)
// that classifies it as waiting or instant: a waiting method hands the
// invoking goroutine's adopted work to a worker first (dispatch.Runner) and
// its time is a wait, not guest time, for the CPU ledger.
//
// The process call's children are the host's too (process.go checks a
// request; proctrack_linux.go runs and ends a child): each leads its own
// session, and nothing of a run — its group, its session, their
// descendants, orphans that escaped by setsid — outlives the call, its
// cancellation or the capsule's unload. Background processes
// (background.go, logring.go) are the one kind that outlives its call: they
// are held in the kernel's Background registry, owned by capsule and
// principal, and end with their capsule instance (a persistent one with its
// capsule) or the kernel. The host must not leave a process running that
// neither a call nor that registry accounts for.
//
// So are the capsule's sockets (net.go, net_handles.go): streams and
// listeners belong to the Capsule and the principal that opened them, not to
// a call, and all of them close when the capsule unloads. The host must not
// leave a socket open, or a socket file behind, for a capsule that is gone.
package host
