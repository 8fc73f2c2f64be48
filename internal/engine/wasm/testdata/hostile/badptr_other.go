//go:build !wasip1

package hostile

import "github.com/astrid-go/astrid/sdk"

func badPointers(*sdk.Call) error { return nil }
