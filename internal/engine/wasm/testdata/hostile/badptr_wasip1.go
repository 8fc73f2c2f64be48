//go:build wasip1

package hostile

import (
	"encoding/json"

	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/sdk"
)

//go:wasmimport astrid ipc_publish
func rawPublish(topicPtr, topicLen, payloadPtr, payloadLen uint32) uint64

//go:wasmimport astrid fs_read
func rawFSRead(pathPtr, pathLen uint32) uint64

//go:wasmimport astrid log
func rawLog(level int32, msgPtr, msgLen uint32) uint64

// badPointers calls imports with pointers and lengths outside linear
// memory and reports, per call, whether the host answered an error.
func badPointers(c *sdk.Call) error {
	results := map[string]bool{}
	check := func(name string, packed uint64) {
		_, _, isErr := abi.UnpackResult(packed)
		results[name] = isErr
	}
	check("publish_topic_past_end", rawPublish(0xfffffff0, 64, 0, 0))
	check("publish_huge_len", rawPublish(16, 0x7fffffff, 16, 0x7fffffff))
	check("fs_read_wrapped", rawFSRead(0xffffffff, 0xffffffff))
	check("log_past_end", rawLog(0, 0xffff0000, 0x10000))
	out, _ := json.Marshal(results)
	c.Final(out)
	return nil
}

// rawNoop is the benchmark's baseline: an export that takes the same
// invocation length astrid_invoke does and does nothing with it.
//
//go:wasmexport raw_noop
func rawNoop(n int32) uint64 { return 0 }
