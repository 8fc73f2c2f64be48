// Package install owns putting capsules into $ASTRID_HOME/capsules and
// taking them out, as `astrid capsule install`, `approve` and `remove` (and
// later the daemon) do: a capsule is copied into a hidden staging directory
// beside its destination, checked there (manifest, name, component
// integrity), and only then, with the operator's approval recorded
// (internal/grants), renamed into capsules/<id> — a reinstall swaps the
// directories in one step, so a kernel starting at any moment sees the old
// capsule or the new one, never a mix or neither. Staging left behind by a
// crash is deleted by the next install or remove; one install or remove
// runs at a time (a lock file).
//
// It must not ask anyone anything or print: the caller shows the grants and
// gets the confirmation before Commit. It must not load capsules (the
// runtime does, and holds each load to the approval recorded here), and
// must never write outside the capsules directory and the state database:
// a source's symlinks may not lead out of it, ids are validated before they
// become paths, and built-in capsules can be neither installed over nor
// removed.
package install
