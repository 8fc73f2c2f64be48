package install

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/manifest"
)

// Default bounds of what one install copies.
const (
	DefaultMaxBytes = 1 << 30
	DefaultMaxFiles = 100_000
)

// Options say where capsules are installed and what may not be.
type Options struct {
	// Home is $ASTRID_HOME; capsules go to its capsules/ directory.
	Home string
	// Reserved names the ids no install may take and no remove may touch,
	// each with what holds it ("a built-in capsule", "the kernel").
	Reserved map[string]string
	// Builtins are the binary's built-in capsules, whose tools an install
	// may not declare (as the runtime refuses at load).
	Builtins []runtime.Builtin
	// MaxComponentBytes bounds a wasm component (config
	// limits.max_component_bytes); 0: the wasm engine's default.
	MaxComponentBytes int64
	// MaxBytes and MaxFiles bound what one install copies (0: the
	// defaults), so that pointing install at the wrong directory fails
	// instead of filling the disk.
	MaxBytes int64
	MaxFiles int
	// LockWait bounds the wait for another install or remove to finish
	// (0: DefaultLockWait); past it, ErrBusy.
	LockWait time.Duration
}

// DefaultLockWait is how long an install waits for another to finish.
const DefaultLockWait = 10 * time.Second

func (o Options) lockWait() time.Duration {
	if o.LockWait > 0 {
		return o.LockWait
	}
	return DefaultLockWait
}

func (o Options) capsulesDir() string { return config.Layout(o.Home).Capsules }

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

func (o Options) maxFiles() int {
	if o.MaxFiles > 0 {
		return o.MaxFiles
	}
	return DefaultMaxFiles
}

// checkID refuses an id that is not a capsule id (so never "..", a path
// or empty) or that is reserved; verb says what was refused ("install
// over", "remove").
func (o Options) checkID(id, verb string) error {
	if err := manifest.ValidateID(id); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if holder, ok := o.Reserved[id]; ok {
		return fmt.Errorf("install: %s is %s, part of the astrid binary: it cannot be %s (%w)", id, holder, verbDone(verb), ErrReserved)
	}
	return nil
}

func verbDone(verb string) string {
	switch verb {
	case "remove":
		return "removed"
	case "approve":
		return "approved (it needs no approval)"
	}
	return "installed over; rename the package to install yours"
}

// target is capsules/<id>; id has passed checkID.
func (o Options) target(id string) string { return filepath.Join(o.capsulesDir(), id) }
