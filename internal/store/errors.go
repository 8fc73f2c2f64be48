package store

import "errors"

// Sentinel errors; every error returned by this package wraps at most one of
// them, with the file, namespace and key it concerns.
var (
	// ErrInUse means another process (or another Store on the same file
	// in this one) held the database file's lock for longer than the
	// wait allowed (Options.Timeout). It is contention, not damage: the
	// same call may succeed once the holder lets go.
	ErrInUse = errors.New("database is in use")
	// ErrClosed means the Store was used after Close.
	ErrClosed = errors.New("store is closed")
	// ErrInvalid means an id, key or value breaks the package's rules.
	ErrInvalid = errors.New("invalid argument")
	// ErrKeyFile means the secrets key file cannot be used as it is.
	ErrKeyFile = errors.New("unusable secrets key file")
	// ErrUnseal means a sealed secret failed authentication: wrong key file,
	// tampered bytes, or a value moved from another key.
	ErrUnseal = errors.New("secret cannot be unsealed")
)
