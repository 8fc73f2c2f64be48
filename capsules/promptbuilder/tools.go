package promptbuilder

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// ToolCacheKey is the KV key of the cached tool catalogue (spec §4.3).
const ToolCacheKey = "__tool_schema_cache"

// describeWindow bounds the describe fan-out (DESIGN §5a).
const describeWindow = 500 * time.Millisecond

// ToolCacheMaxAge bounds how long a cached catalogue is served. The kernel
// publishes astrid.v1.capsules_loaded as the default principal only, so a
// capsule reloaded in place (same id, new tools) clears only that
// principal's cache; every other principal's is refreshed within this age.
const ToolCacheMaxAge = time.Minute

// toolCache is the cached catalogue and the capsule set it is valid for.
type toolCache struct {
	// Responders are the capsules that intercepted the describe topic when
	// the catalogue was collected, sorted: a cache is served only while
	// the same set intercepts it, so an installed or removed capsule is
	// never missed.
	Responders []string                `json:"responders"`
	Tools      []ipc.LLMToolDefinition `json:"tools"`
	// CollectedUnixMs is when the fan-out ran (host clock).
	CollectedUnixMs int64 `json:"collected_unix_ms"`
}

// fresh reports whether the cache may be served now for the capsule set
// set: the same capsules answer describe, and it is younger than
// ToolCacheMaxAge (a stamp from the future counts as stale).
func (tc toolCache) fresh(set []string, now time.Time) bool {
	age := now.Sub(time.UnixMilli(tc.CollectedUnixMs))
	return slices.Equal(tc.Responders, set) && age >= 0 && age < ToolCacheMaxAge
}

// tools returns what the model is offered: the cached catalogue when the
// capsules answering describe are the ones it was collected from, else a
// fresh fan-out (cached only when every capsule answered).
func tools(c *sdk.Call) ([]ipc.LLMToolDefinition, error) {
	responders, err := c.Interceptors(ipc.ToolRequestDescribeTopic)
	if err != nil {
		return nil, fmt.Errorf("who intercepts %s: %w", ipc.ToolRequestDescribeTopic, err)
	}
	set := responderSet(responders, c.CapsuleID())
	now := c.Now()
	if cached, ok := loadToolCache(c); ok && cached.fresh(set, now) {
		return cached.Tools, nil
	}
	cat, err := sdk.DescribeTools(c, describeWindow)
	if err != nil {
		return nil, fmt.Errorf("describe fan-out: %w", err)
	}
	defs := llmTools(c, cat.Tools)
	if len(cat.Missing) > 0 {
		c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: capsules %s did not describe their tools within %v; their tools are left out and the catalogue is not cached",
			strings.Join(cat.Missing, ", "), describeWindow))
		return defs, nil
	}
	storeToolCache(c, toolCache{Responders: responderSet(cat.Responders, ""), Tools: defs, CollectedUnixMs: now.UnixMilli()})
	return defs, nil
}

// responderSet is ids sorted and deduplicated, without self.
func responderSet(ids []string, self string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != self {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// llmTools spells each tool for an LLM API (':' as "__"); a name that
// cannot be spelled so is left out and logged, never renamed into another
// tool's.
func llmTools(c *sdk.Call, described []sdk.DescribedTool) []ipc.LLMToolDefinition {
	defs := make([]ipc.LLMToolDefinition, 0, len(described))
	for _, t := range described {
		name, err := ipc.LLMToolName(t.Name)
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: tool %q of %s is not offered to the model: %v", t.Name, t.Capsule, err))
			continue
		}
		desc := t.Description
		d := ipc.LLMToolDefinition{Name: name, InputSchema: t.InputSchema}
		if desc != "" {
			d.Description = &desc
		}
		defs = append(defs, d)
	}
	return defs
}

func loadToolCache(c *sdk.Call) (toolCache, bool) {
	var cached toolCache
	b, ok, err := c.KVGet(ToolCacheKey)
	if err != nil {
		c.Log(hostapi.LogWarn, "prompt builder: tool cache unreadable: "+err.Error())
		return cached, false
	}
	if !ok {
		return cached, false
	}
	if err := json.Unmarshal(b, &cached); err != nil {
		// An older capsule's bare array, or damage: collect afresh.
		return toolCache{}, false
	}
	return cached, true
}

func storeToolCache(c *sdk.Call, cache toolCache) {
	b, err := json.Marshal(cache)
	if err == nil {
		err = c.KVSet(ToolCacheKey, b)
	}
	if err != nil {
		c.Log(hostapi.LogWarn, "prompt builder: tool catalogue not cached: "+err.Error())
	}
}

// handleCapsulesLoaded drops the cached catalogue: a capsule reloaded in
// place keeps its id, so the responder set alone would not notice its new
// tools.
func handleCapsulesLoaded(c *sdk.Call) error {
	if err := c.KVDelete(ToolCacheKey); err != nil && hostapi.CodeOf(err) != hostapi.CodeNotFound {
		return fmt.Errorf("drop tool cache: %w", err)
	}
	return nil
}
