package kernel

import (
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

// BenchmarkToolCallAudit is a whole tool call (BenchmarkRoundTrip's
// read_file) with the audit chain on and off, the two kernels taking turns
// call by call in one run, so the machine's load hits both alike. With it
// on, the router queues the start entry and waits for the end entry's
// group commit (write and fdatasync of the chain) before it answers.
//
//	GOMAXPROCS=2 go test -run '^$' -bench ToolCallAudit -count 5 ./internal/kernel/
func BenchmarkToolCallAudit(b *testing.B) {
	on, onWS := bootBench(b, nil)
	off, offWS := bootBench(b, nil, func(o *Options) { o.AuditOff = true })
	callOn, closeOn := toolRoundTrip(b, on, onWS)
	defer closeOn()
	callOff, closeOff := toolRoundTrip(b, off, offWS)
	defer closeOff()
	testutil.Interleave(b, 100, "audit-on", "audit-off", callOn, callOff)
}
