package install

import "errors"

// ErrReserved is wrapped when an id belongs to a built-in capsule or the
// kernel.
var ErrReserved = errors.New("reserved")

// ErrToolTaken is wrapped when a capsule declares a tool another capsule
// already provides.
var ErrToolTaken = errors.New("tool already provided")

// ErrNotInstalled is wrapped by Remove and Find when no capsule of that id
// is installed.
var ErrNotInstalled = errors.New("not installed")

// ErrBusy is wrapped when another install or remove holds the lock past
// the wait.
var ErrBusy = errors.New("another install or remove is in progress")
