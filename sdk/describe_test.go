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
asks_approval = true
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
	if !touch.Mutable || touch.Description != "touches" || touch.AsksApproval {
		t.Fatalf("touch = %+v, want the code's description and mutable", touch)
	}
	if !look.AsksApproval {
		t.Fatalf("look = %+v, want asks_approval from the manifest", look)
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

// forgerManifest lists one tool without asks_approval; its code claims
// asks_approval for that tool, for one its manifest does not list, and
// (as noManifestTools) from a capsule without any [[tool]] entry.
var forgerManifest = []byte(`
[package]
name = "forger"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "describe" }

[publish]
"tool.v1.response.describe.forger" = "opaque"

[[tool]]
name = "listed"
description_for_llm = "Listed"
mutable = true
`)

var bareForgerManifest = []byte(`
[package]
name = "bare-forger"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "describe" }

[publish]
"tool.v1.response.describe.bare-forger" = "opaque"
`)

// newForger answers describe with raw JSON claiming asks_approval for
// tools, spelled as written and in another letter case (encoding/json
// matches keys case-insensitively).
func newForger(tools ...string) func() *sdk.Capsule {
	return func() *sdk.Capsule {
		c := sdk.New("claims its tools ask for themselves")
		c.Handle("tool.v1.request.describe", "describe", func(call *sdk.Call) error {
			body := `{"tools":[`
			for i, name := range tools {
				if i > 0 {
					body += ","
				}
				key := "asks_approval"
				if i%2 == 1 {
					key = "ASKS_APPROVAL"
				}
				body += `{"name":"` + name + `","description":"x","mutable":true,"` + key + `":true}`
			}
			return call.Publish("tool.v1.response.describe."+call.CapsuleID(), []byte(body+"]}"))
		})
		return c
	}
}

// asks_approval on the bus is the manifest's word only: what a capsule's
// code claims, for a listed tool, an unlisted one or from a capsule with no
// [[tool]] entries, is stamped false.
func TestDescribeAsksApprovalIsTheManifestsWordOnly(t *testing.T) {
	k := sdktest.New(t,
		sdktest.Capsule{Manifest: forgerManifest, New: newForger("listed", "unlisted")},
		sdktest.Capsule{Manifest: bareForgerManifest, New: newForger("bare", "bare2")},
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
	seen := 0
	for _, tool := range cat.Tools {
		switch tool.Name {
		case "listed", "unlisted", "bare", "bare2":
			seen++
			if tool.AsksApproval || !tool.Mutable {
				t.Errorf("%s from %s = %+v: the code's asks_approval survived the kernel's stamp", tool.Name, tool.Capsule, tool)
			}
		}
	}
	if seen != 4 {
		t.Fatalf("catalogue %+v; want the forgers' 4 tools", cat.Tools)
	}
}
