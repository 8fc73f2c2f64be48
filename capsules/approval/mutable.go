package approval

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// catalogueKey holds the cached mutable flags (volatile).
const catalogueKey = "~catalogue"

// describeWindow bounds one describe fan-out: 500 ms, as the prompt
// builder's. (In nanoseconds: time is not among the packages a built-in
// capsule imports, and the untyped constant becomes a time.Duration.)
const describeWindow = 500 * 1000 * 1000

// catalogueMaxAge is how long a cached catalogue is trusted, in
// nanoseconds: one minute. astrid.v1.capsules_loaded is a system event,
// handled as the default principal, so it clears only that principal's
// cache; a capsule reloaded under the same id (a new version whose
// manifest now marks a tool mutable) leaves the capsule set unchanged, and
// every other principal would otherwise keep the old flags forever.
const catalogueMaxAge = 60 * 1000 * 1000 * 1000

// catalogue is what a describe fan-out said about each tool.
type catalogue struct {
	// Responders are the capsules that were asked: the cache is valid for
	// this set only.
	Responders []string `json:"responders"`
	// At is when it was collected, host-clock Unix nanoseconds.
	At    int64                `json:"at"`
	Tools map[string]toolEntry `json:"tools"`
}

type toolEntry struct {
	Capsule string `json:"capsule"`
	Mutable bool   `json:"mutable"`
}

// verdict is what the approval layer knows about a tool.
type verdict struct {
	mutable bool
	// described is false when the provider's describe answer did not
	// list the tool (or another capsule's did first): it is then treated
	// as mutable, and the question says why.
	described bool
}

// classify says whether provider's tool changes things, from the cached
// catalogue, or a fresh describe fan-out when the cache is missing, stale,
// for another set of capsules, or does not know the tool.
func classify(c *sdk.Call, tool, provider string) (verdict, error) {
	responders, err := describeResponders(c)
	if err != nil {
		return verdict{}, err
	}
	if cat, ok := loadCatalogue(c); ok && slices.Equal(cat.Responders, responders) && c.Now().UnixNano()-cat.At < catalogueMaxAge {
		if t, ok := cat.Tools[tool]; ok && t.Capsule == provider {
			return verdict{mutable: t.Mutable, described: true}, nil
		}
	}
	cat, err := describe(c)
	if err != nil {
		return verdict{}, err
	}
	t, ok := cat.Tools[tool]
	switch {
	case !ok:
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: %s's tool %q is not in any describe answer; treated as mutable", provider, tool))
		return verdict{mutable: true}, nil
	case t.Capsule != provider:
		// sdk.DescribeTools keeps a name once, from the first capsule in
		// dispatch order; a capsule describing another's tool as read-only
		// must not talk a call past the question.
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: tool %q is described by %s but provided by %s; treated as mutable", tool, t.Capsule, provider))
		return verdict{mutable: true}, nil
	}
	return verdict{mutable: t.Mutable, described: true}, nil
}

// describeResponders is who answers describe now, as sdk.DescribeTools
// asks them: in dispatch order, once each, without this capsule.
func describeResponders(c *sdk.Call) ([]string, error) {
	ids, err := c.Interceptors(ipc.ToolRequestDescribeTopic)
	if err != nil {
		return nil, err
	}
	self := c.CapsuleID()
	out := []string{}
	for _, id := range ids {
		if id != self && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

func loadCatalogue(c *sdk.Call) (catalogue, bool) {
	var cat catalogue
	raw, ok, err := c.KVGet(catalogueKey)
	if err != nil || !ok || json.Unmarshal(raw, &cat) != nil {
		return cat, false
	}
	return cat, true
}

// describe runs the fan-out and caches what it found.
func describe(c *sdk.Call) (catalogue, error) {
	found, err := sdk.DescribeTools(c, describeWindow)
	if err != nil {
		return catalogue{}, fmt.Errorf("describe fan-out: %w", err)
	}
	if len(found.Missing) > 0 {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: capsules did not answer describe: %v; their tools are treated as mutable", found.Missing))
	}
	cat := catalogue{Responders: found.Responders, At: c.Now().UnixNano(), Tools: map[string]toolEntry{}}
	if cat.Responders == nil {
		cat.Responders = []string{}
	}
	for _, t := range found.Tools {
		cat.Tools[t.Name] = toolEntry{Capsule: t.Capsule, Mutable: t.Mutable}
	}
	raw, err := json.Marshal(cat)
	if err == nil {
		err = c.KVSet(catalogueKey, raw)
	}
	if err != nil {
		// The answer still stands for this call; the next one asks again.
		c.Log(hostapi.LogWarn, "approval: catalogue not cached: "+err.Error())
	}
	return cat, nil
}

// handleCapsulesLoaded drops the cached catalogue: the set of tools, or
// their flags, may have changed.
func handleCapsulesLoaded(c *sdk.Call) error {
	if c.SourceID() != ipc.KernelSourceID {
		return nil
	}
	return c.KVDelete(catalogueKey)
}
