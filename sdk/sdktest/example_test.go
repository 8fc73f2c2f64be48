package sdktest_test

import (
	"fmt"
	"testing"

	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

var greeterManifest = []byte(`
[package]
name = "greeter"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.greet" = { wit = "opaque", handler = "tool_execute_greet" }

[publish]
"tool.v1.response.describe.greeter" = "opaque"
"tool.v1.execute.greet.result" = "opaque"
`)

type greetArgs struct {
	Name string `json:"name" desc:"who to greet"`
}

func newGreeter() *sdk.Capsule {
	c := sdk.New("Greets people")
	sdk.Tool(c, "greet", "Greet someone by name", func(_ *sdk.Call, a greetArgs) (string, error) {
		if a.Name == "" {
			return "", fmt.Errorf("name must not be empty")
		}
		return "Hello, " + a.Name + "!", nil
	})
	return c
}

func TestGreeter(t *testing.T) {
	sdktest.CheckRegistrations(t, greeterManifest, newGreeter())
	k := sdktest.New(t, sdktest.Capsule{Manifest: greeterManifest, New: newGreeter})
	if res := k.CallTool("greet", map[string]string{"name": "Ada"}); res.IsError || res.Content != "Hello, Ada!" {
		t.Errorf("greet: %+v", res)
	}
	if res := k.CallTool("greet", `{"name":""}`); !res.IsError || res.Content != "name must not be empty" {
		t.Errorf("empty name: %+v", res)
	}
	if res := k.CallTool("greet", `{}`); !res.IsError {
		t.Errorf("missing argument accepted: %+v", res)
	}
	tools := k.Tools()
	if len(tools) != 1 || tools[0].Name != "greet" || tools[0].Capsule != "greeter" {
		t.Errorf("tools: %+v", tools)
	}
}

// Testing a capsule: boot an in-memory kernel with it and call its tools
// through the bus, exactly as an agent would.
func Example() {
	t := &testing.T{} // in a real test, the *testing.T you were given
	k := sdktest.New(t, sdktest.Capsule{Manifest: greeterManifest, New: newGreeter})
	res := k.CallTool("greet", map[string]string{"name": "Ada"})
	fmt.Println(res.Content, res.IsError)
	// Output: Hello, Ada! false
}
