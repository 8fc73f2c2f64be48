// Package static is the engine every capsule gets: it serves what a capsule
// declares as plain files — [[context_file]], [[skill]] and [[command]]
// (with its declarative command file) — on the static topics
// (docs/static.md). The files are read from the capsule's directory when
// the engine loads, so a reload picks up new text.
//
// It must not run capsule code, read outside the capsule's directory (files
// are opened through os.Root on it) or publish anywhere but its own
// response topics, which its Surface adds to the capsule's ACL.
package static
