package wasm

import (
	"encoding/json"

	"github.com/tetratelabs/wazero/api"

	"github.com/astrid-go/astrid/hostapi"
)

// processImports are the background process calls (docs/abi.md, "Background
// processes"): a spawn takes the JSON of hostapi.ProcessSpawnRequest and
// answers that of hostapi.ProcessHandle; logs and kill take the id and
// answer the JSON of hostapi.ProcessLogs.
var processImports = []importDef{
	{name: "process_spawn", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		raw, err := arg(mod, s[0], s[1], "request")
		if err != nil {
			return nil, err
		}
		var req hostapi.ProcessSpawnRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, "process_spawn", "request is not the JSON of docs/abi.md: %v", err)
		}
		h, err := st.call.ProcessSpawn(req)
		if err != nil {
			return nil, err
		}
		return jsonOf(h)
	}},
	{name: "process_logs", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		id, err := arg(mod, s[0], s[1], "id")
		if err != nil {
			return nil, err
		}
		l, err := st.call.ProcessLogs(string(id))
		if err != nil {
			return nil, err
		}
		return jsonOf(l)
	}},
	{name: "process_kill", params: p(2), fn: func(st *callState, mod api.Module, s []uint64) ([]byte, error) {
		id, err := arg(mod, s[0], s[1], "id")
		if err != nil {
			return nil, err
		}
		l, err := st.call.ProcessKill(string(id))
		if err != nil {
			return nil, err
		}
		return jsonOf(l)
	}},
}

func init() { registerImports(processImports) }
