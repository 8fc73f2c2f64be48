// Package capsuleoci owns moving capsule archives to and from OCI
// registries over the distribution API: the oci:// reference syntax, the
// artifact's layout (an OCI image manifest of artifact type ArtifactType
// whose one layer is the .capsule archive), publishing, fetching with
// every digest and media type checked (the manifest against the digest
// the registry or the reference names, its media type and layout, the
// layer against the manifest's digest and a size bound) before any byte
// is handed on, and registry authentication (basic, bearer tokens, the
// sealed store of `astrid registry login`, the docker config and its
// credential helpers).
//
// The distribution API, the token flow and the docker config are
// oras-go v2's (registry/remote, remote/auth, remote/credentials), linked
// into the one astrid binary; this package adds astrid's rules on top
// (artifact kinds, bounds, errors callers can test with errors.Is; see
// docs/rationale/distribution.md for its start-up cost).
// It must not dial on its own: the caller passes the HTTP client (the
// egress client, whose SSRF guard applies to every hop, redirects and
// token servers included). It must not read the archive's contents
// (internal/capsulepack does) or install anything.
package capsuleoci
