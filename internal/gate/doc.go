// Package gate owns the lexical capability checks: given one capsule's
// [capabilities] and where its install directory, the workspace and the
// principals' homes are, it answers whether a file path, HTTP host, TCP
// endpoint, socket bind, identity level or host command is granted, and for
// files under which granted root the path falls.
//
// It must not touch the file system, the network or DNS, and it must not
// normalise a request into something the capsule did not spell: a path with
// "..", an empty or "." component, a backslash or a control character is
// refused, never cleaned. Symlinks are the host's business: it opens an
// os.Root on the Root a check returns and does the I/O there, so nothing the
// gate allowed can lead out of the granted directory (DESIGN §4, Files). The
// address actually dialled is checked by internal/egress (DESIGN §4, Network).
//
// Every denial is a *DeniedError wrapping ErrDenied. A Gate is immutable after
// New and safe for concurrent use.
package gate
