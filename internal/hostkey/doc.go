// Package hostkey owns the host's ed25519 signing key: the one key that
// signs what this host vouches for later (audit chain entries, capability
// tokens). The key is created on first use and kept sealed in the store's
// secrets, under a namespace no capsule can have, so it is never handed to a
// capsule as configuration and never written to disk in the clear.
//
// It must not decide what is signed or how signatures are checked beyond
// ed25519 itself: the audit and capability packages own their formats.
package hostkey
