// Package manifest owns Capsule.toml: its types, parsing, validation with
// positioned diagnostics, and the effective views the kernel enforces (the
// publish and subscribe ACL, interceptors, capabilities).
//
// It must not do I/O beyond reading the manifest and stat-ing the files it
// names, and it imports nothing of this module but ipc.
package manifest
