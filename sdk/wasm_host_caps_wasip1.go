//go:build wasip1

package sdk

import (
	"encoding/json"

	"github.com/astrid-go/astrid/hostapi"
)

//go:wasmimport astrid capability_mint
func abiCapabilityMint(grantPtr, grantLen uint32) uint64

//go:wasmimport astrid capability_check
func abiCapabilityCheck(queryPtr, queryLen uint32) uint64

// capabilityQuery is capability_check's argument (docs/abi.md).
type capabilityQuery struct {
	Capsule  string `json:"capsule"`
	Tool     string `json:"tool"`
	Resource string `json:"resource"`
}

func (*wasmHost) MintCapability(g hostapi.CapabilityGrant) (string, error) {
	raw, err := json.Marshal(g)
	if err != nil {
		return "", hostapi.Errorf(hostapi.CodeInvalid, "mint_capability", "%v", err)
	}
	id, err := call1(abiCapabilityMint, string(raw))
	return string(id), err
}

func (*wasmHost) CheckCapability(capsule, tool, resource string) (string, error) {
	raw, err := json.Marshal(capabilityQuery{Capsule: capsule, Tool: tool, Resource: resource})
	if err != nil {
		return "", hostapi.Errorf(hostapi.CodeInvalid, "check_capability", "%v", err)
	}
	id, err := call1(abiCapabilityCheck, string(raw))
	return string(id), err
}

//go:wasmimport astrid agent_policy
func abiAgentPolicy() uint64

func (*wasmHost) AgentPolicy() (hostapi.AgentPolicy, error) {
	var p hostapi.AgentPolicy
	raw, err := result(abiAgentPolicy())
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, hostapi.Errorf(hostapi.CodeInternal, "agent_policy", "answer: %v", err)
	}
	return p, nil
}
