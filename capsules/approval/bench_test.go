package approval_test

import (
	"strconv"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// What the approval layer adds to a read-only call (the cached catalogue,
// two "who intercepts" answers and one more chain link), against the same
// call with the router alone.
func BenchmarkReadOnlyCall(b *testing.B) {
	// The calls rotate over principals: the publish rate limit (10 MiB/s
	// per capsule and principal, which sdktest's default config keeps) is
	// not what is measured, and a closed loop of one principal's calls
	// reaches it.
	principals := make([]string, 16)
	for i := range principals {
		principals[i] = "p" + strconv.Itoa(i)
	}
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
			for _, p := range principals {
				k.CallToolAs(p, "list_directory", args) // each principal's catalogue is cached
			}
			b.ResetTimer()
			for i := range b.N {
				if res := k.CallToolAs(principals[i%len(principals)], "list_directory", args); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}

// A mutable call the principal allowed "always": the approval layer finds
// the standing allowance (a capability token the kernel checks) and lets
// the call through, against the same call with the router alone.
func BenchmarkAlwaysAllowedCall(b *testing.B) {
	for _, tc := range []struct {
		name     string
		capsules []sdktest.Capsule
	}{
		{"router", []sdktest.Capsule{{Manifest: fs.Manifest, New: fs.New}}},
		{"approval+router", underTest(nil)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			k := sdktest.New(b, tc.capsules...)
			args := write("f.txt", "x")
			if tc.name != "router" {
				questions := k.Approvals(alice)
				call := k.StartTool(alice, "", "write_file", args)
				q, _ := questions.Next()
				k.Answer(alice, q.RequestID, ipc.DecisionApproveAlways)
				if res := call.Wait(); res.IsError {
					b.Fatal(res.Content)
				}
			}
			b.ResetTimer()
			for range b.N {
				if res := k.CallToolAs(alice, "write_file", args); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}
