//go:build wasip1

package wasmrun

import "github.com/astrid-go/astrid/sdk"

//go:wasmexport astrid_run
func astridRun() int32 { return sdk.RunService() }
