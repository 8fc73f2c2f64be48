package sdk_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

var providerManifest = []byte(`
[package]
name = "provider"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.look" = { wit = "opaque", handler = "tool_execute_look" }
"tool.v1.execute.touch" = { wit = "opaque", handler = "tool_execute_touch" }

[publish]
"tool.v1.response.describe.provider" = "opaque"
"tool.v1.execute.look.result" = "opaque"
"tool.v1.execute.touch.result" = "opaque"

[[tool]]
name = "look"
description_for_llm = "Look (as the operator reviewed it)"
mutable = true
`)

func newProvider() *sdk.Capsule {
	c := sdk.New("looks and touches")
	sdk.Tool(c, "look", "looks", func(*sdk.Call, struct{}) (string, error) { return "", nil })
	sdk.Tool(c, "touch", "touches", func(*sdk.Call, struct{}) (string, error) { return "", nil }, sdk.Mutable())
	return c
}

// silent intercepts the describe topic and never answers.
var silentManifest = []byte(`
[package]
name = "silent"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "ignore" }
`)

func newSilent() *sdk.Capsule {
	c := sdk.New("never answers")
	c.Handle("tool.v1.request.describe", "ignore", func(*sdk.Call) error { return nil })
	return c
}

var listerManifest = []byte(`
[package]
name = "lister"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.catalogue" = { wit = "opaque", handler = "tool_execute_catalogue" }
"tool.v1.response.describe.*" = { wit = "opaque" }

[publish]
"tool.v1.request.describe" = "opaque"
"tool.v1.response.describe.lister" = "opaque"
"tool.v1.execute.catalogue.result" = "opaque"
`)

func newLister() *sdk.Capsule {
	c := sdk.New("lists the tools")
	c.Publishes("tool.v1.request.describe")
	c.Subscribes("tool.v1.response.describe.*")
	sdk.Tool(c, "catalogue", "the catalogue", func(call *sdk.Call, _ struct{}) (string, error) {
		cat, err := sdk.DescribeTools(call, 300*time.Millisecond)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(cat)
		return string(b), err
	})
	return c
}

// The fan-out collects every answering capsule's tools (the lister's own
// included: its describe handler is not asked while it runs, so it is not
// waited for), names who did not answer, and is not waited on by the caller.
func TestDescribeToolsCollectsAnswersAndNamesTheSilent(t *testing.T) {
	k := sdktest.New(t,
		sdktest.Capsule{Manifest: providerManifest, New: newProvider},
		sdktest.Capsule{Manifest: silentManifest, New: newSilent},
		sdktest.Capsule{Manifest: listerManifest, New: newLister},
	)
	res := k.CallTool("catalogue", `{}`)
	if res.IsError {
		t.Fatalf("catalogue: %s", res.Content)
	}
	var cat sdk.Catalogue
	if err := json.Unmarshal([]byte(res.Content), &cat); err != nil {
		t.Fatalf("%v: %s", err, res.Content)
	}
	got := map[string]sdk.DescribedTool{}
	for _, tool := range cat.Tools {
		got[tool.Name] = tool
	}
	// The kernel stamps the manifest's [[tool]] entry on the answer: its
	// description, and mutable although the code says read-only; touch,
	// not in the manifest, is as the code described it.
	look, touch := got["look"], got["touch"]
	if len(got) != 2 || look.Capsule != "provider" || !look.Mutable || look.Description != "Look (as the operator reviewed it)" {
		t.Fatalf("look = %+v, want the manifest's description and mutable, from provider", look)
	}
	if !touch.Mutable || touch.Description != "touches" {
		t.Fatalf("touch = %+v, want the code's description and mutable", touch)
	}
	if len(cat.Missing) != 1 || cat.Missing[0] != "silent" {
		t.Fatalf("missing = %v, want [silent]", cat.Missing)
	}
	for _, id := range cat.Responders {
		if id == "lister" {
			t.Fatalf("the caller was among the responders waited for: %v", cat.Responders)
		}
	}
}
