//go:build wasip1

package sdk

import (
	"encoding/json"

	"github.com/astrid-go/astrid/hostapi"
)

//go:wasmimport astrid component_call
func abiComponentCall(reqPtr, reqLen, payloadPtr, payloadLen uint32) uint64

func callComponent(id, handler string, payload []byte) ([]byte, error) {
	req, err := json.Marshal(struct {
		Component string `json:"component"`
		Handler   string `json:"handler"`
	}{id, handler})
	if err != nil {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, "component_call", "%v", err)
	}
	return call2(abiComponentCall, string(req), payload)
}
