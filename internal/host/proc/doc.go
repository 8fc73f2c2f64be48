// Package proc runs the processes capsules start (hostapi.Process): the
// checks no grant makes safe (CheckRequest, ResolveProgram), confinement
// (Sandbox.Confine: a capsule's grants as a sandbox.Policy, a private
// $TMPDIR, the egress proxy; internal/sandbox enforces it), the process
// tracker (proctrack_linux.go), and the background processes (Background,
// logring.go).
//
// Every child leads its own session, and nothing of a run — its group,
// its session, their descendants, orphans that escaped by setsid — outlives
// the call, its cancellation or its capsule instance's Close. Background
// processes are the one kind that outlives its call: they are held in the
// kernel's Background registry, owned by capsule and principal, and end
// with their capsule instance (a persistent one with its capsule, Discard)
// or the kernel. It must not leave a process running that neither a call
// nor that registry accounts for.
//
// It decides no grant: internal/host checks host_process and
// allow_persistent against the capsule's gate, opens the working
// directory through the grant, asks the person about an unconfined run,
// and calls in with a command built by Command. It knows no bus, no
// dispatcher and no call.
package proc
