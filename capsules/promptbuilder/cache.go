package promptbuilder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// toolCache is the cached catalogue and the capsule set it is valid for.
type toolCache struct {
	// Responders are the capsules that intercepted the describe topic when
	// the catalogue was collected, sorted: a cache is served only while
	// the same set intercepts it, so an installed or removed capsule is
	// never missed.
	Responders []string                `json:"responders"`
	Tools      []ipc.LLMToolDefinition `json:"tools,omitempty"` // collected; kept on a line of their own
	// CollectedUnixMs is when the fan-out ran (host clock).
	CollectedUnixMs int64 `json:"collected_unix_ms"`
	// Policy names the agent policy the tools were filtered by (policyKey).
	Policy string `json:"policy,omitempty"`
	// ToolsSHA256 is the hash of the tools line kept after this one.
	ToolsSHA256 string `json:"tools_sha256,omitempty"`
	// toolsJSON is Tools encoded as the response carries them.
	toolsJSON json.RawMessage
}

// fresh reports whether the cache may be served now for the capsule set
// set: the same capsules answer describe, and it is younger than
// ToolCacheMaxAge (a stamp from the future counts as stale).
func (tc toolCache) fresh(set []string, now time.Time) bool {
	age := now.Sub(time.UnixMilli(tc.CollectedUnixMs))
	return slices.Equal(tc.Responders, set) && age >= 0 && age < ToolCacheMaxAge
}

// The catalogue is kept in KV as sent: a line of JSON saying what it is
// valid for and the SHA-256 of the tools, then the tools array encoded as
// the answer carries it. A turn served from it decodes the short line and
// copies the array into its answer (decoding 100 tools and encoding them
// again was two thirds of an assembly). A value that is not this, or whose
// tools do not match their hash, is collected afresh.

// loadToolCache reads the kept catalogue.
func loadToolCache(c *sdk.Call) (toolCache, bool) {
	b, ok, err := c.KVGet(ToolCacheKey)
	if err != nil {
		c.Log(hostapi.LogWarn, "prompt builder: tool cache unreadable: "+err.Error())
		return toolCache{}, false
	}
	if !ok {
		return toolCache{}, false
	}
	cached, err := decodeToolCache(b)
	if err != nil {
		// An older capsule's value, or damage: collect afresh.
		c.Log(hostapi.LogDebug, "prompt builder: tool cache not served: "+err.Error())
		return toolCache{}, false
	}
	return cached, true
}

// storeToolCache keeps cache in KV (a failure is logged: the catalogue is
// collected again next turn) and returns its tools encoded.
func storeToolCache(c *sdk.Call, cache toolCache) (json.RawMessage, error) {
	b, tools, err := encodeToolCache(cache)
	if err != nil {
		return nil, err
	}
	if err := c.KVSet(ToolCacheKey, b); err != nil {
		c.Log(hostapi.LogWarn, "prompt builder: tool catalogue not cached: "+err.Error())
	}
	return tools, nil
}

// encodeToolCache is cache as kept in KV, and its tools encoded.
func encodeToolCache(cache toolCache) (kept []byte, tools json.RawMessage, err error) {
	if tools, err = marshalTools(cache.Tools); err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(tools)
	cache.Tools, cache.ToolsSHA256 = nil, hex.EncodeToString(sum[:])
	head, err := json.Marshal(cache)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the tool cache: %w", err)
	}
	kept = make([]byte, 0, len(head)+1+len(tools))
	kept = append(append(append(kept, head...), '\n'), tools...)
	return kept, tools, nil
}

// decodeToolCache reads what encodeToolCache wrote; its toolsJSON is a
// sub-slice of b.
func decodeToolCache(b []byte) (toolCache, error) {
	head, tools, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return toolCache{}, errors.New("no tools line")
	}
	var cache toolCache
	if err := json.Unmarshal(head, &cache); err != nil {
		return toolCache{}, fmt.Errorf("the first line: %w", err)
	}
	sum := sha256.Sum256(tools)
	if cache.ToolsSHA256 != hex.EncodeToString(sum[:]) || len(cache.Tools) != 0 {
		return toolCache{}, errors.New("the tools do not match their hash")
	}
	cache.toolsJSON = tools
	return cache, nil
}

// marshalTools encodes defs as the response's tools array ([] when there
// are none: the orchestrator tells an empty catalogue from a missing one).
func marshalTools(defs []ipc.LLMToolDefinition) (json.RawMessage, error) {
	if defs == nil {
		defs = []ipc.LLMToolDefinition{}
	}
	b, err := json.Marshal(defs)
	if err != nil {
		return nil, fmt.Errorf("encode the tool catalogue: %w", err)
	}
	return b, nil
}
