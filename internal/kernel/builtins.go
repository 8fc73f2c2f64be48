package kernel

import (
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/sdk"
)

// Builtin is a capsule linked into the binary: its manifest and its code.
type Builtin struct {
	Manifest []byte
	New      func() *sdk.Capsule
}

// Builtins are the capsules every kernel loads, in load order.
func Builtins() []Builtin {
	return []Builtin{
		{Manifest: router.Manifest, New: router.New},
		{Manifest: fs.Manifest, New: fs.New},
	}
}
