package wasm

import (
	"encoding/json"

	"github.com/tetratelabs/wazero/api"

	"github.com/astrid-go/astrid/hostapi"
)

// elicitImports are the host elicit call's imports.
var elicitImports = []importDef{
	{name: "elicit", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		raw, err := arg(mod, s[0], s[1], "question")
		if err != nil {
			return nil, err
		}
		var q hostapi.ElicitRequest
		if err := json.Unmarshal(raw, &q); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "elicit", "question: %v", err)
		}
		ans, err := st.call.Elicit(q)
		if err != nil {
			return nil, err
		}
		return json.Marshal(ans)
	}},
}

func init() { registerImports(elicitImports) }
