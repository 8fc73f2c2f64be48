package hostapi_test

import (
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
)

// Host calls fail with an *Error: a code to branch on, and a message
// that names the operation. errors.Is matches a code through any wrapping.
func ExampleErrorf() {
	err := fmt.Errorf("loading settings: %w", hostapi.Errorf(hostapi.CodeNotFound, "fs_read", "settings.json: no such file"))
	fmt.Println(err)
	fmt.Println(hostapi.CodeOf(err))
	fmt.Println(errors.Is(err, hostapi.ErrNotFound), errors.Is(err, hostapi.ErrDenied))
	fmt.Println(hostapi.CodeOf(errors.New("not a host error")))
	// Output:
	// loading settings: fs_read: settings.json: no such file
	// not found
	// true false
	// internal error
}

// A handler answers an interceptor chain with a Verdict; the zero value
// lets the chain go on.
func ExampleVerdict() {
	for _, v := range []hostapi.Verdict{{}, {Action: hostapi.Final, Payload: []byte(`"done"`)}, {Action: hostapi.Deny, Reason: "not allowed"}} {
		fmt.Printf("%s %s %q\n", v.Action, v.Payload, v.Reason)
	}
	// Output:
	// continue  ""
	// final "done" ""
	// deny  "not allowed"
}
