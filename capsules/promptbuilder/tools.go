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

// tools returns what the model is offered: the cached catalogue when the
// capsules answering describe are the ones it was collected from, else a
// fresh fan-out (cached only when every capsule answered).
func tools(c *sdk.Call) (json.RawMessage, error) {
	responders, err := c.Interceptors(ipc.ToolRequestDescribeTopic)
	if err != nil {
		return nil, fmt.Errorf("who intercepts %s: %w", ipc.ToolRequestDescribeTopic, err)
	}
	set := responderSet(responders, c.CapsuleID())
	now := c.Now()
	// The principal's limits, read on every turn (an operator may change
	// them while the kernel runs): the cache holds what this policy was
	// offered, and serves only the same policy.
	policy, err := c.AgentPolicy()
	if err != nil {
		return nil, fmt.Errorf("the limits of principal %s: %w", c.Principal(), err)
	}
	key := policyKey(policy)
	if cached, ok := loadToolCache(c); ok && cached.fresh(set, now) && cached.Policy == key {
		return cached.toolsJSON, nil
	}
	cat, err := sdk.DescribeTools(c, describeWindow)
	if err != nil {
		return nil, fmt.Errorf("describe fan-out: %w", err)
	}
	defs := llmTools(c, offered(c, policy, cat.Tools))
	if len(cat.Missing) > 0 {
		c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: capsules %s did not describe their tools within %v; their tools are left out and the catalogue is not cached",
			strings.Join(cat.Missing, ", "), describeWindow))
		return marshalTools(defs)
	}
	if cat.ScopeBound {
		// A session's own servers answered: this catalogue is the
		// scope's, and a cached copy would offer their tools to the
		// principal's other sessions.
		return marshalTools(defs)
	}
	return storeToolCache(c, toolCache{Responders: responderSet(cat.Responders, ""), Tools: defs, CollectedUnixMs: now.UnixMilli(), Policy: key})
}

// offered is the tools the principal's policy lets it use: an agent that
// is read-only is offered no mutable tool, and one limited to some
// capsules only their tools (the approval layer refuses the others should
// the model call them anyway).
func offered(c *sdk.Call, policy hostapi.AgentPolicy, tools []sdk.DescribedTool) []sdk.DescribedTool {
	if !policy.Agent {
		return tools
	}
	out := make([]sdk.DescribedTool, 0, len(tools))
	for _, t := range tools {
		if policy.MayUse(t.Capsule, t.Mutable) {
			out = append(out, t)
		}
	}
	if left := len(tools) - len(out); left > 0 {
		c.Log(hostapi.LogInfo, fmt.Sprintf("prompt builder: %d tool(s) not offered to agent %s (read-only %v, capsules %v)", left, c.Principal(), policy.ReadOnly, policy.Capsules))
	}
	return out
}

// policyKey names a policy for the tool cache.
func policyKey(p hostapi.AgentPolicy) string {
	if !p.Agent {
		return ""
	}
	return fmt.Sprintf("ro=%v;capsules=%s", p.ReadOnly, strings.Join(p.Capsules, ","))
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

// handleCapsulesLoaded drops the cached catalogue: a capsule reloaded in
// place keeps its id, so the responder set alone would not notice its new
// tools.
func handleCapsulesLoaded(c *sdk.Call) error {
	if err := c.KVDelete(ToolCacheKey); err != nil && hostapi.CodeOf(err) != hostapi.CodeNotFound {
		return fmt.Errorf("drop tool cache: %w", err)
	}
	return nil
}
