// Package capsulepack owns the shareable capsule archive (a .capsule file):
// packing a capsule directory into it deterministically (same files, same
// bytes), reading one from an untrusted source with every escape refused,
// and the ed25519 publisher signature over it.
//
// An archive is a gzip'd tar of regular files only: meta.json first (the
// capsule's build record plus every other file's sha256 and size), then
// the files in byte order of their paths, then signature.json if signed.
// Read refuses paths that leave the archive (absolute, "..", backslashes),
// links and devices, duplicate names, declared sizes past the limits, and
// any file that is missing from meta.json or differs from its digest.
//
// It must not install (internal/install stages and commits what Extract
// writes), keep keys (internal/publisher seals them and holds the trust
// store), reach the network, or decide whether an unsigned or unknown
// publisher is accepted: Verify says which of those an archive is and the
// caller asks.
package capsulepack
