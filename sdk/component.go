package sdk

import "github.com/astrid-go/astrid/hostapi"

// CallComponent calls handler of the library component id of this
// capsule ([[component]] type = "library", named in this component's link
// list) with payload, as the invoking principal, and returns what the
// handler answered with Final or Continue (docs/abi.md, Components). A
// handler that denies is an error naming its reason.
func (c *Call) CallComponent(id, handler string, payload []byte) ([]byte, error) {
	return callComponent(id, handler, payload)
}

// errNoComponents is CallComponent's answer outside a wasm guest: only the
// wasm engine loads several components.
var errNoComponents = hostapi.Errorf(hostapi.CodeNotSupported, "component_call", "library components run only in a wasm capsule")
