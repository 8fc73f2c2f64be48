// Package parts is every component of the components test capsule, built
// once: loaded as the executable (app.go: call and count, which the
// manifest binds) and as the libraries (lib.go: upper, refuse, relay,
// whoami, which app calls through the host), each as a module instance of
// its own. It is built only for GOOS=wasip1 (testdata is outside ./...).
package parts

import (
	"encoding/json"
	"strconv"

	"github.com/astrid-go/astrid/sdk"
)

// request names the component and handler to call, and the payload.
type request struct {
	Component string `json:"component"`
	Handler   string `json:"handler"`
	Payload   string `json:"payload"`
}

// answer is what came back.
type answer struct {
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// calls counts the calls this instance took as the executable.
var calls int

// New returns the capsule: the executable's handlers and the libraries'.
func New() *sdk.Capsule {
	c := sdk.New("calls its library components")
	libraryHandlers(c)
	c.Handle("components.v1.call", "call", func(c *sdk.Call) error {
		calls++
		var req request
		if err := c.Decode(&req); err != nil {
			return err
		}
		var a answer
		out, err := c.CallComponent(req.Component, req.Handler, []byte(req.Payload))
		if err != nil {
			a.Error = err.Error()
		} else {
			a.Result = string(out)
		}
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		c.Final(b)
		return nil
	})
	c.Handle("components.v1.count", "count", func(c *sdk.Call) error {
		c.Final([]byte(strconv.Itoa(calls)))
		return nil
	})
	return c
}
