//go:build wasip1

package runloop

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/astrid-go/astrid/internal/abi"
)

//go:wasmimport astrid ipc_recv
func rawRecv(sub, timeoutMs int64) uint64

//go:wasmimport astrid capsule_id
func rawCapsuleID() uint64

// Spin is written by the stuck loop so the compiler keeps it.
var Spin uint64

// capsuleID reads the import's answer in place: the host wrote it into the
// scratch buffer, valid until the next import call.
func capsuleID() string {
	ptr, n, isErr := abi.UnpackResult(rawCapsuleID())
	if isErr || n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Add(nil, uintptr(ptr))), n))
}

//go:wasmexport astrid_run
func astridRun() int32 {
	id := capsuleID()
	fmt.Println("run loop started in", id)
	if strings.Contains(id, "stuck") {
		for {
			Spin++
		}
	}
	for i := 1; ; i++ {
		rawRecv(1, 1) // no such subscription: an error at once, and progress
		if i%10_000 == 0 {
			fmt.Println("run loop progress", i)
		}
	}
}
