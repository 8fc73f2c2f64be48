package runtime

import (
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

// Builtin is a capsule linked into the binary: its embedded manifest and a
// constructor for its code.
type Builtin struct {
	Manifest []byte
	New      func() *sdk.Capsule
}

// Candidate is a discovered capsule, ready to be ordered and loaded.
type Candidate struct {
	Manifest *manifest.Manifest
	// Dir is the install directory; "" for a built-in.
	Dir string
	// Code is the built-in's constructor; nil for an installed capsule.
	Code func() *sdk.Capsule
}

// ID is the capsule id.
func (c *Candidate) ID() string { return c.Manifest.ID() }

// Builtin reports whether the capsule is linked into the binary.
func (c *Candidate) Builtin() bool { return c.Code != nil }

// Problem is a capsule that cannot be loaded, and why.
type Problem struct {
	// ID is the capsule id, or the directory's name when the manifest
	// could not be read.
	ID  string
	Dir string
	Err error
}
