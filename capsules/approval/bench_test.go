package approval_test

import (
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// What the approval layer adds to a read-only call (the cached catalogue,
// two "who intercepts" answers and one more chain link), against the same
// call with the router alone.
func BenchmarkReadOnlyCall(b *testing.B) {
	for _, tc := range []struct {
		name     string
		capsules []sdktest.Capsule
	}{
		{"router", []sdktest.Capsule{{Manifest: fs.Manifest, New: fs.New}}},
		{"approval+router", underTest(nil)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			k := sdktest.New(b, tc.capsules...)
			args := map[string]string{"dir_path": "."}
			k.CallTool("list_directory", args) // the catalogue is cached
			b.ResetTimer()
			for range b.N {
				if res := k.CallTool("list_directory", args); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}
