// Package manifest owns Capsule.toml: its types, parsing, validation with
// positioned diagnostics (error, warning, note), Cargo-style version
// requirements, the effective views the kernel enforces (the publish and
// subscribe ACL, interceptors, merged capabilities, engines, the tools a
// capsule provides), the rule that keeps the tool plumbing to capsules
// granted tool_middleware (DESIGN §4c), which the loader applies again to
// the ACL engines add, and the [[tool]] entries' word over what a capsule's
// code says of its tools (StampPublish, which the host applies to every
// publish). The kernel asks it these so that it never reads a tool's topic.
//
// Nothing in a manifest is silently ignored: a key this runtime acts on draws
// nothing, a key upstream accepts but this runtime does not act on draws a
// warning saying so, an unknown key draws a warning, and what would make the
// capsule unsafe or unloadable is an error.
//
// It must not do I/O beyond reading the manifest and stat-ing (and hashing)
// the files it names, must not decide anything at run time (the gate and
// dispatch do that from the views it returns), and imports nothing of this
// module but ipc.
package manifest
