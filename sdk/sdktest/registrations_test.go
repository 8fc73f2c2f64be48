package sdktest

import (
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/sdk"
)

func TestBuiltinsMatchTheirManifests(t *testing.T) {
	CheckRegistrations(t, router.Manifest, router.New())
	CheckRegistrations(t, fs.Manifest, fs.New())
}

func TestRegistrationMismatchesAreReported(t *testing.T) {
	c := sdk.New("x")
	sdk.Tool(c, "hello", "says hello", func(*sdk.Call, struct{}) (string, error) { return "hi", nil })
	manifestTOML := []byte(`
[package]
name = "mismatch"
version = "0.1.0"
[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.goodbye" = { wit = "opaque", handler = "tool_execute_goodbye" }
[publish]
"tool.v1.response.describe.mismatch" = "opaque"
"tool.v1.execute.goodbye.result" = "opaque"
"agent.v1.response" = "opaque"
`)
	got := strings.Join(registrationProblems(manifestTOML, c), "\n")
	for _, want := range []string{
		`"tool.v1.execute.hello → tool_execute_hello" is registered in code but not declared`,
		`"tool.v1.execute.goodbye → tool_execute_goodbye" is declared in Capsule.toml but not registered`,
		`[publish] key "agent.v1.response" is declared in Capsule.toml but not registered`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing problem %s in:\n%s", want, got)
		}
	}
}
