package promptbuilder

import "github.com/astrid-go/astrid/ipc"

// KeptToolCache is the KV value of a catalogue collected from responders
// at stamp (Unix ms), as storeToolCache keeps it.
func KeptToolCache(responders []string, stamp int64, tools []ipc.LLMToolDefinition) string {
	b, _, err := encodeToolCache(toolCache{Responders: responders, CollectedUnixMs: stamp, Tools: tools})
	if err != nil {
		panic(err)
	}
	return string(b)
}
