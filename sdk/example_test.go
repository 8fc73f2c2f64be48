package sdk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

type countArgs struct {
	Text string `json:"text" desc:"the text to count the words of"`
	Max  *int   `json:"max" desc:"stop counting here"`
}

// A tool is a function of its arguments; its schema comes from the
// argument type, and an error becomes an is_error result.
func ExampleTool() {
	c := sdk.New("Counts words")
	sdk.Tool(c, "count_words", "Count the words of a text", func(_ *sdk.Call, a countArgs) (string, error) {
		n := len(strings.Fields(a.Text))
		if a.Max != nil && n > *a.Max {
			n = *a.Max
		}
		return fmt.Sprint(n), nil
	})
	k := sdktest.New(&testing.T{}, // in a real test, the *testing.T you were given
		sdktest.Capsule{Manifest: counterManifest, New: func() *sdk.Capsule { return c }})
	fmt.Println(k.CallTool("count_words", `{"text":"one two three"}`).Content)
	fmt.Println(k.CallTool("count_words", `{"text":"one two three","max":2}`).Content)
	res := k.CallTool("count_words", `{"max":2}`)
	fmt.Println(res.IsError, res.Content)
	// Output:
	// 3
	// 2
	// true failed to parse tool arguments: missing field "text"
}

// SchemaOf is the JSON Schema a tool's describe entry carries.
func ExampleSchemaOf() {
	schema, err := sdk.SchemaOf[countArgs]()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(schema))
	// Output:
	// {"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"max":{"description":"stop counting here","type":"integer"},"text":{"description":"the text to count the words of","type":"string"}},"required":["text"],"type":"object"}
}

// Registrations is what the capsule's Capsule.toml must grant; sdktest's
// CheckRegistrations compares the two in a capsule's tests.
func ExampleCapsule_Registrations() {
	c := sdk.New("Counts words")
	sdk.Tool(c, "count_words", "Count the words of a text", func(*sdk.Call, countArgs) (string, error) { return "", nil })
	r := c.Registrations("counter")
	for _, b := range r.Interceptors {
		fmt.Println("subscribe", b.Pattern, "handler", b.Handler)
	}
	fmt.Println("publish", r.Publish)
	// Output:
	// subscribe tool.v1.execute.count_words handler tool_execute_count_words
	// subscribe tool.v1.request.describe handler tool_describe
	// publish [tool.v1.execute.count_words.result tool.v1.response.describe.counter]
}

var counterManifest = []byte(`
[package]
name = "counter"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.count_words" = { wit = "opaque", handler = "tool_execute_count_words" }

[publish]
"tool.v1.response.describe.counter" = "opaque"
"tool.v1.execute.count_words.result" = "opaque"
`)
