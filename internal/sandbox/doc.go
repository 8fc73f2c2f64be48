// Package sandbox confines the processes a capsule starts (DESIGN §11).
//
// It owns one thing: turning a Policy (what a capsule's grants resolve to
// for one call, plus the operator's system set) into OS enforcement for a
// child process, and saying what this machine can enforce (Probe).
//
// How: Start runs exec.Cmd.Start on a dedicated OS thread that it locks and
// confines first — no new privileges, every capability dropped, a Landlock
// domain (files, TCP ports, signal and abstract-socket scopes) and a seccomp
// filter (no socket families Landlock cannot see, no io_uring, no
// namespaces or kernel keyrings). The child inherits the thread's
// confinement across fork and exec. That thread runs nothing else and exits
// once the child has been waited for, so the daemon itself is never
// confined (docs/sandbox.md: "Why a confined thread and not a re-executed
// helper?").
//
// It must not decide what a capsule may do: the gate does (internal/gate),
// and the host (internal/host) builds the Policy from it. It never relaxes a
// policy it cannot enforce: in enforce mode a missing kernel feature is an
// error naming the feature.
package sandbox
