// Package hello is the smallest useful tool capsule: one tool, greet, whose
// greeting the operator may set with `astrid capsule env set hello GREETING`.
// It is an example of a third-party capsule: build it to wasm with
// `astrid capsule build examples/hello` and install it with
// `astrid capsule install examples/hello` (see the README).
package hello

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/sdk"
)

type greetArgs struct {
	Name string `json:"name" desc:"who to greet"`
}

// New returns the capsule's code.
func New() *sdk.Capsule {
	c := sdk.New("Greets someone by name")
	sdk.Tool(c, "greet", "Greet a person by name", greet)
	return c
}

func greet(c *sdk.Call, a greetArgs) (string, error) {
	name := strings.TrimSpace(a.Name)
	if name == "" {
		return "", fmt.Errorf("name must not be empty")
	}
	greeting, ok := c.Config("GREETING")
	if !ok || greeting == "" {
		greeting = "Hello"
	}
	return fmt.Sprintf("%s, %s!", greeting, name), nil
}
