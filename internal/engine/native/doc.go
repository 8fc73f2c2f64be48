// Package native runs an sdk capsule in-process: the engine for the built-in
// capsules linked into the astrid binary. Calls for different principals run
// concurrently; each reaches the world only through its internal/host Call,
// under the capsule's manifest.
//
// It must not run untrusted code: a native capsule shares the kernel's
// address space. A handler that overruns its deadline is abandoned (its
// failure reply is published and its host calls fail from then on), not
// stopped.
package native
