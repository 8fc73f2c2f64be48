package parts

import (
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/sdk"
)

// upperCalls counts upper's calls in this instance (a library's), which no
// other component's memory shares.
var upperCalls int

// libraryHandlers are the handlers the capsule's library components serve,
// called by the other components through the host.
func libraryHandlers(c *sdk.Capsule) {
	c.Handle("lib.v1.upper", "upper", func(c *sdk.Call) error {
		upperCalls++
		c.Final([]byte(strings.ToUpper(string(c.Payload())) + " #" + strconv.Itoa(upperCalls)))
		return nil
	})
	c.Handle("lib.v1.refuse", "refuse", func(c *sdk.Call) error {
		c.Deny("the library refuses " + string(c.Payload()))
		return nil
	})
	// relay calls another component in turn: its payload is
	// "component:handler:payload", the handler "upper" when it names only
	// a component. What it may call is what its own link list names.
	c.Handle("lib.v1.relay", "relay", func(c *sdk.Call) error {
		parts := strings.SplitN(string(c.Payload()), ":", 3)
		for len(parts) < 3 {
			parts = append(parts, map[int]string{1: "upper", 2: "x"}[len(parts)])
		}
		out, err := c.CallComponent(parts[0], parts[1], []byte(parts[2]))
		if err != nil {
			return err
		}
		c.Final(out)
		return nil
	})
	c.Handle("lib.v1.whoami", "whoami", func(c *sdk.Call) error {
		c.Final([]byte(c.Principal()))
		return nil
	})
}
