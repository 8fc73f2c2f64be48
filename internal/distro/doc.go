// Package distro owns the files that describe a set of capsules installed
// together: Distro.toml (the capsules by name, version requirement and
// source), Distro.lock (each one pinned: the exact source, the archive's
// sha256, its version and its signer's key) and the offline bundle (the
// lock and every archive it pins, in one tar).
//
// It must not fetch, verify signatures or install: the CLI resolves a
// Distro.toml into a lock, and applies a lock through the same install as
// `astrid capsule install`. The bundle reader treats its input as
// untrusted: regular files with the two names it expects only, each
// archive's name its own sha256, sizes bounded.
package distro
