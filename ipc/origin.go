package ipc

import "encoding/json"

// Origin records the transport a request came in on. Only OriginLocalSocket
// earns local-operator privilege; System is the fail-closed default and is
// left out of the JSON.
type Origin string

// The three origins upstream defines.
const (
	OriginSystem        Origin = ""
	OriginLocalSocket   Origin = "local_socket"
	OriginRemoteGateway Origin = "remote_gateway"
)

// UnmarshalJSON maps a missing or unknown value to OriginSystem.
func (o *Origin) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		*o = OriginSystem
		return nil
	}
	switch Origin(s) {
	case OriginLocalSocket, OriginRemoteGateway:
		*o = Origin(s)
	default:
		*o = OriginSystem
	}
	return nil
}
