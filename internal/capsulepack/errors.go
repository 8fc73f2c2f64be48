package capsulepack

import "errors"

// Errors Read, Verify and Extract wrap, for callers to tell apart.
var (
	// ErrUnsafe: an entry that could leave the destination or is not a
	// plain file (a "../" or absolute path, a link, a device, a duplicate).
	ErrUnsafe = errors.New("unsafe archive entry")
	// ErrTooLarge: past Limits.
	ErrTooLarge = errors.New("archive too large")
	// ErrDigest: a file missing from meta.json, or differing from its sha256.
	ErrDigest = errors.New("archive digest mismatch")
	// ErrBadSignature: signature.json present but not a valid signature
	// of this archive; never accepted, whatever the caller allows.
	ErrBadSignature = errors.New("bad publisher signature")
	// ErrMalformed: not a capsule archive at all.
	ErrMalformed = errors.New("not a capsule archive")
)
