package wasm

import (
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
)

// The host side's translation between hostapi's types and internal/abi's
// records (abi is a leaf and does not know hostapi).

// abiInvocation is inv as an invocation record carries it (the handler
// crosses as an index, not a name).
func abiInvocation(inv hostapi.Invocation) abi.Invocation {
	return abi.Invocation{Pattern: inv.Pattern, Topic: inv.Topic, SourceID: inv.SourceID, Principal: inv.Principal, Payload: inv.Payload}
}

// appendHostError appends err as an error record; an error without a code
// crosses as internal.
func appendHostError(dst []byte, err error) []byte {
	code := hostapi.CodeOf(err)
	if code == hostapi.CodeOK {
		code = hostapi.CodeInternal
	}
	return abi.AppendError(dst, uint32(code), err.Error())
}

// decodeGuestError is the error record a guest's astrid_invoke answered;
// its message is the error's full text, so it reads as it did natively.
func decodeGuestError(rec []byte) *hostapi.Error {
	code, msg, ok := abi.DecodeError(rec)
	if !ok {
		return &hostapi.Error{Code: hostapi.CodeInternal, Message: "malformed error record"}
	}
	return &hostapi.Error{Code: hostapi.Code(code), Message: msg}
}
