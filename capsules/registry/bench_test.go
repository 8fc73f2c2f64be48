package registry_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// What a turn pays to learn its model: get_active_model answered from the
// cache, against get_providers, which always runs the describe fan-out
// (two providers). The asks rotate over 32 principals, each warmed first:
// one principal's answers at this rate would pass the bus's byte rate
// limit per (capsule, principal), which is what it is for.
// go test -run xxx -bench . ./capsules/registry
func BenchmarkActiveModel(b *testing.B) {
	k := sdktest.New(b, regCapsule(), sdktest.Capsule{Manifest: replay.Manifest, New: replay.New},
		fixture{id: "test-alpha", provider: "alpha", answer: entries("alpha", true, "a1")}.capsule())
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		f    func(context.Context, registryclient.Kernel, string) (ipc.RegistryReply, error)
	}{{"cached", registryclient.Current}, {"discovery", registryclient.List}} {
		b.Run(bc.name, func(b *testing.B) {
			principals := make([]string, 32)
			for i := range principals {
				principals[i] = fmt.Sprintf("%s-%d", bc.name, i)
				if _, err := bc.f(ctx, k.Agent(), principals[i]); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			for b.Loop() {
				if _, err := bc.f(ctx, k.Agent(), principals[i%len(principals)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
