package sdk

import (
	"encoding/json"
	"runtime"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
)

//go:wasmimport astrid process_spawn
func abiProcessSpawn(reqPtr, reqLen uint32) uint64

//go:wasmimport astrid process_logs
func abiProcessLogs(idPtr, idLen uint32) uint64

//go:wasmimport astrid process_kill
func abiProcessKill(idPtr, idLen uint32) uint64

// ProcessSpawn starts a background process through the host
// (hostapi.Process).
func (*wasmHost) ProcessSpawn(req hostapi.ProcessSpawnRequest) (hostapi.ProcessHandle, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return hostapi.ProcessHandle{}, hostapi.Errorf(hostapi.CodeInvalid, "process_spawn", "%v", err)
	}
	p, n := abi.BytesPtr(b)
	r := abiProcessSpawn(p, n)
	runtime.KeepAlive(b)
	return decodeJSON[hostapi.ProcessHandle](result(r))
}

// ProcessLogs reads a background process's new output and state.
func (*wasmHost) ProcessLogs(id string) (hostapi.ProcessLogs, error) {
	return decodeJSON[hostapi.ProcessLogs](call1(abiProcessLogs, id))
}

// ProcessKill ends a background process and returns its last output.
func (*wasmHost) ProcessKill(id string) (hostapi.ProcessLogs, error) {
	return decodeJSON[hostapi.ProcessLogs](call1(abiProcessKill, id))
}
