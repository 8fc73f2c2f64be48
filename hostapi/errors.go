package hostapi

import (
	"errors"
	"fmt"
)

// Code classifies a host call failure. Codes are stable: they cross the wasm
// boundary as numbers (docs/abi.md), so values are never renumbered.
type Code uint32

// Error codes. OK is never carried by an Error.
const (
	CodeOK           Code = 0
	CodeDenied       Code = 1  // a capability or ACL refused it
	CodeNotFound     Code = 2  // no such file, key, subscription
	CodeInvalid      Code = 3  // malformed argument
	CodeTimeout      Code = 4  // a wait ended without a result
	CodeClosed       Code = 5  // the subscription or call has ended
	CodeTooLarge     Code = 6  // over a size cap
	CodeRateLimited  Code = 7  // over the publish rate budget
	CodeExists       Code = 8  // the target already exists
	CodeUnavailable  Code = 9  // a dependency is down (network, store)
	CodeCancelled    Code = 10 // the call was cancelled
	CodeInternal     Code = 11 // a host bug; details in the kernel log
	CodeNotSupported Code = 12 // this host does not implement the call
	CodeIO           Code = 13 // an I/O error from the OS or the network
	CodeDeclined     Code = 14 // the person declined to answer (Elicit)
)

var codeNames = map[Code]string{
	CodeOK: "ok", CodeDenied: "denied", CodeNotFound: "not found", CodeInvalid: "invalid argument",
	CodeTimeout: "timeout", CodeClosed: "closed", CodeTooLarge: "too large", CodeRateLimited: "rate limited",
	CodeExists: "exists", CodeUnavailable: "unavailable", CodeCancelled: "cancelled", CodeInternal: "internal error",
	CodeNotSupported: "not supported", CodeIO: "i/o error", CodeDeclined: "declined",
}

func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("code %d", uint32(c))
}

// Error is a host call failure: a code a program can branch on and a message
// a person can read.
type Error struct {
	Code    Code   `json:"code"`
	Op      string `json:"op"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Op == "" {
		return e.Message
	}
	return e.Op + ": " + e.Message
}

// Is makes errors.Is(err, &Error{Code: c}) match on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Message == "" && t.Code == e.Code
}

// Errorf builds an *Error.
func Errorf(code Code, op, format string, args ...any) *Error {
	return &Error{Code: code, Op: op, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err: CodeOK for nil, the code of a wrapped
// *Error, CodeInternal otherwise.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Sentinels for errors.Is.
var (
	ErrDenied   = &Error{Code: CodeDenied}
	ErrNotFound = &Error{Code: CodeNotFound}
	ErrTimeout  = &Error{Code: CodeTimeout}
	ErrClosed   = &Error{Code: CodeClosed}
)
