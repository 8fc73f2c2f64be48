package store

import "errors"

// Sentinel errors; every error returned by this package wraps at most one of
// them, with the file, namespace and key it concerns.
var (
	// ErrInUse means the database file is held by another opener (another
	// process, or another Open in this one).
	ErrInUse = errors.New("database is in use")
	// ErrInvalid means an id, key or value breaks the package's rules.
	ErrInvalid = errors.New("invalid argument")
	// ErrKeyFile means the secrets key file cannot be used as it is.
	ErrKeyFile = errors.New("unusable secrets key file")
	// ErrUnseal means a sealed secret failed authentication: wrong key file,
	// tampered bytes, or a value moved from another key.
	ErrUnseal = errors.New("secret cannot be unsealed")
)
