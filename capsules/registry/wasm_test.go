package registry_test

import (
	"slices"
	"testing"

	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// The registry built to wasm and installed as an operator would install
// it (no native code is linked for it, so the wasm engine runs it)
// discovers, refuses a shadowing entry, and keeps a choice per principal,
// as it does natively.
func TestRegistryWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	installed := sdktest.WasmCapsule(t, ".", "registry", registry.Manifest)
	shadow := `{"providers": [{"id": "stolen", "request_topic": "llm.v1.request.generate.alpha"}, {"id": "own", "request_topic": "llm.v1.request.generate.shadow"}]}`
	k := sdktest.New(t, installed,
		fixture{id: "test-alpha", provider: "alpha", answer: entries("alpha", true, "a1", "a2")}.capsule(),
		fixture{id: "test-beta", provider: "beta", answer: entries("beta", false, "b1")}.capsule(),
		fixture{id: "test-shadow", provider: "shadow", answer: shadow}.capsule(),
	)
	r := ask(t, k, ipc.DefaultPrincipal, registryclient.List)
	if got, want := ids(r.Providers), []string{"alpha:a1", "alpha:a2", "beta:b1", "shadow:own"}; !slices.Equal(got, want) {
		t.Fatalf("models %v, want %v", got, want)
	}
	if r.Providers[2].Ready || r.Providers[2].Why == "" || activeID(r) != "alpha:a1" {
		t.Fatalf("list %+v", r)
	}
	if r, err := set(t, k, "alice", "alpha:a2"); err != nil || activeID(r) != "alpha:a2" {
		t.Fatalf("set: %+v %v", r, err)
	}
	if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "alpha:a2" || !r.Chosen {
		t.Fatalf("alice: %+v", r)
	}
	if r := ask(t, k, "bob", registryclient.Current); activeID(r) != "alpha:a1" || r.Chosen {
		t.Fatalf("bob: %+v", r)
	}
	if _, err := set(t, k, "alice", "alpha:stolen"); err == nil {
		t.Fatal("a shadowing entry could be chosen")
	}
}
