package hello

import (
	"os"
	"testing"

	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestHello(t *testing.T) {
	manifestTOML, err := os.ReadFile("Capsule.toml")
	if err != nil {
		t.Fatal(err)
	}
	sdktest.CheckRegistrations(t, manifestTOML, New())
	k := sdktest.New(t, sdktest.Capsule{Manifest: manifestTOML, New: New})
	if res := k.CallTool("greet", map[string]string{"name": "Ada"}); res.IsError || res.Content != "Hello, Ada!" {
		t.Errorf("greet: %+v", res)
	}
	if res := k.CallTool("greet", map[string]string{"name": "  "}); !res.IsError {
		t.Errorf("blank name accepted: %+v", res)
	}
}
