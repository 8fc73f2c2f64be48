package registry

import (
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// DefaultOrder is the order in which providers are tried for the default
// model when a principal has chosen none: the first ready model of the
// first of these that has one. Replay comes after them, then any other
// provider's first ready model (docs/rationale/providers.md).
var DefaultOrder = []string{"anthropic", "openai"}

// replayProvider is the offline provider that answers when no hosted one
// is ready.
const replayProvider = "replay"

// resolve returns the principal's active model among entries: its choice
// when that is still offered, else the default (with a note saying why
// the choice was passed over).
func resolve(c *sdk.Call, entries []ipc.ModelEntry) ipc.RegistryReply {
	var reply ipc.RegistryReply
	chosen, ok, err := c.KVGet(keyActive)
	if err != nil {
		c.Log(hostapi.LogWarn, "registry: the active model is unreadable: "+err.Error())
	}
	if ok {
		if e, found := lookup(entries, string(chosen)); found {
			reply.ActiveModel, reply.Chosen = &e, true
			return reply
		}
		reply.Note = fmt.Sprintf("the chosen model %s is not offered by any loaded provider; the default answers instead", chosen)
		c.Log(hostapi.LogWarn, "registry: "+reply.Note)
	}
	if e, ok := pickDefault(entries); ok {
		reply.ActiveModel = &e
	}
	return reply
}

// pickDefault is the model a principal without a choice uses.
func pickDefault(entries []ipc.ModelEntry) (ipc.ModelEntry, bool) {
	for _, p := range DefaultOrder {
		for _, e := range entries {
			if e.Provider == p && e.Ready {
				return e, true
			}
		}
	}
	for _, e := range entries {
		if e.Provider == replayProvider {
			return e, true
		}
	}
	for _, e := range entries {
		if e.Ready {
			return e, true
		}
	}
	return ipc.ModelEntry{}, false
}

// lookup finds the entry whose canonical id is id.
func lookup(entries []ipc.ModelEntry, id string) (ipc.ModelEntry, bool) {
	for _, e := range entries {
		if e.ID == id {
			return e, true
		}
	}
	return ipc.ModelEntry{}, false
}
