package manifest_test

import (
	"fmt"

	"github.com/astrid-go/astrid/manifest"
)

// The manifest's [publish] and [subscribe] keys are the capsule's ACL;
// [subscribe] entries with a handler are its interceptors.
func ExampleLoad() {
	m, diags := manifest.Load("testdata/example")
	if err := diags.Err(false); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("capsule:", m.ID(), m.Package.Version)
	fmt.Println("engines:", m.Engines())
	fmt.Println("may publish:", m.PublishPatterns())
	fmt.Println("may subscribe:", m.SubscribePatterns())
	for _, ic := range m.Interceptors() {
		fmt.Printf("interceptor: %s -> %s (priority %d)\n", ic.Pattern, ic.Handler, ic.Priority)
	}
	fmt.Println("granted:", m.Capabilities.Granted())
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// capsule: weather 0.1.0
	// engines: [static]
	// may publish: [tool.v1.execute.forecast.result tool.v1.response.describe.weather]
	// may subscribe: [tool.v1.execute.forecast tool.v1.request.describe]
	// interceptor: tool.v1.execute.forecast -> forecast (priority 100)
	// interceptor: tool.v1.request.describe -> describe (priority 50)
	// granted: [net = ["api.weather.example"]]
}

// Parse reports every problem with its position; Err(false) is non-nil
// only when one of them is an error (warnings do not stop a load).
func ExampleParse() {
	m, diags := manifest.Parse([]byte(`
[package]
name = "notes"
version = "0.1.0"
colour = "blue"

[subscribe]
"notes.v1.add" = { wit = "opaque", handler = "add" }

[publish]
"notes.v1..added" = "opaque"
`), "Capsule.toml", ".")
	for _, d := range diags {
		fmt.Println(d)
	}
	fmt.Println("loads:", diags.Err(false) == nil, "id:", m.ID())
	// Output:
	// Capsule.toml:5:1: warning: unknown key colour in [package] has no effect here; remove it or check its spelling
	// Capsule.toml:11:1: error: [publish] key "notes.v1..added" is not a valid topic pattern: pattern "notes.v1..added" has an empty segment (leading, trailing or doubled dot)
	// loads: false id: notes
}

// A capsule's astrid-version is a Cargo-style requirement; String gives it
// back as written, Matches says whether a kernel version satisfies it.
func ExampleParseRequirement() {
	r, err := manifest.ParseRequirement("^0.1")
	if err != nil {
		panic(err)
	}
	v, err := manifest.ParseVersion("0.1.7")
	if err != nil {
		panic(err)
	}
	fmt.Println(r, r.Matches(v))
	// Output: ^0.1 true
}
