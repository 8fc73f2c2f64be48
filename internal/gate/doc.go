// Package gate owns the lexical capability checks: given one capsule's
// [capabilities] and where its install directory, the workspace and the
// principals' homes are, it answers whether a file path, HTTP host, TCP
// endpoint, socket bind, identity level or host command is granted, and for
// files under which granted root the path falls.
//
// It does not touch the file system (but see below), the network or DNS,
// and it must not normalise a request into something the capsule did not
// spell: a path with
// "..", an empty or "." component, a backslash or a control character is
// refused, never cleaned. Symlinks are the host's business: it opens an
// os.Root on the Root a check returns and does the I/O there, so nothing the
// gate allowed can lead out of the granted directory (DESIGN §4, Files). The
// address actually dialled is checked by internal/egress (DESIGN §4, Network).
//
// $ASTRID_HOME is never inside a grant (Env.Home, home.go): a request that
// resolves into it is refused with HomeReason whatever the grants say, except
// through home:// and cwd://, and every other Root carries the home as its
// Fence, which the host checks against the real path of what it opened (a
// symlink in the workspace may lead into the home without leaving the
// workspace). ProtectedDirs gives the same list to other layers (the OS
// sandbox); it and New, for Env.Home, are the only places that read the file
// system, to resolve the home's symlinks.
//
// Every denial is a *DeniedError wrapping ErrDenied. A Gate is immutable after
// New and safe for concurrent use.
package gate
