package sdk

import (
	"encoding/json"
	"runtime"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
)

//go:wasmimport astrid elicit
func abiElicit(questionPtr, questionLen uint32) uint64

func (*wasmHost) Elicit(q hostapi.ElicitRequest) (hostapi.ElicitAnswer, error) {
	raw, err := json.Marshal(q)
	if err != nil {
		return hostapi.ElicitAnswer{}, hostapi.Errorf(hostapi.CodeInvalid, "elicit", "question: %v", err)
	}
	p, n := abi.BytesPtr(raw)
	r := abiElicit(p, n)
	runtime.KeepAlive(raw)
	return decodeJSON[hostapi.ElicitAnswer](result(r))
}
