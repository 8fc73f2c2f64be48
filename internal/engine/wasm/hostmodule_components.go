package wasm

import (
	"encoding/json"

	"github.com/tetratelabs/wazero/api"

	"github.com/astrid-go/astrid/hostapi"
)

func init() { registerImports(componentImports) }

// componentImports let a component call a library component of its own
// capsule (docs/abi.md, Components; components.go).
var componentImports = []importDef{
	{name: "component_call", params: p(4), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		raw, payload, err := twoArgs(mod, s, "request", "payload")
		if err != nil {
			return nil, err
		}
		var req ComponentCall
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "component_call", "request: %v", err)
		}
		return st.eng.callComponent(st.cctx, st.principal, req, payload)
	}},
}
