package registry

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

// describeWindow bounds the describe fan-out (DESIGN §5a, as for tools).
const describeWindow = 500 * time.Millisecond

// refreshWindow bounds the fan-out a person waits for (astrid models list,
// models set): it asks the providers to refresh their lists, which may
// take a request to their server (the OpenAI provider bounds it at 2 s).
// A turn's discovery never asks that, so never waits on a server.
const refreshWindow = 3 * time.Second

// cacheMaxAge bounds how long a cached list is served. The kernel
// announces loads as the default principal only, so another principal's
// cache of a provider reloaded in place (same id, a new api key) is
// refreshed within this age.
const cacheMaxAge = time.Minute

// partialCacheMaxAge bounds how long a list that some provider did not
// answer for is served: long enough that a provider which never answers
// does not cost every turn the whole describe window, short enough that
// one which was only slow is listed again soon.
const partialCacheMaxAge = 10 * time.Second

// The KV keys: the list cache is volatile (a restarted kernel asks
// afresh); the choice is durable.
const (
	keyCache  = "~registry.providers"
	keyActive = "registry.active_model"
)

// describeEntry is one ProviderEntry of a describe answer (spec §6.1,
// PROVIDER-CONTRACT: plus ready and why).
type describeEntry struct {
	ID              string   `json:"id"`
	Description     string   `json:"description"`
	Capabilities    []string `json:"capabilities"`
	RequestTopic    string   `json:"request_topic"`
	StreamTopic     string   `json:"stream_topic"`
	ContextWindow   uint64   `json:"context_window"`
	MaxOutputTokens uint64   `json:"max_output_tokens"`
	// Ready is absent in providers older than the contract (replay):
	// those count as ready.
	Ready *bool  `json:"ready"`
	Why   string `json:"why"`
	Note  string `json:"note"`
}

// discovery is what one fan-out found.
type discovery struct {
	// Responders are the capsules asked, sorted (the set a cache is valid
	// for).
	Responders []string         `json:"responders"`
	Entries    []ipc.ModelEntry `json:"entries"`
	// Missing are the responders that did not answer in time.
	Missing []string `json:"missing,omitempty"`
	// CollectedUnixMs is when the fan-out ran (host clock).
	CollectedUnixMs int64 `json:"collected_unix_ms"`
}

// fresh reports whether d may be served now for the responder set set (a
// stamp from the future counts as stale).
func (d discovery) fresh(set []string, now time.Time) bool {
	age, limit := now.Sub(time.UnixMilli(d.CollectedUnixMs)), cacheMaxAge
	if len(d.Missing) > 0 {
		limit = partialCacheMaxAge
	}
	return slices.Equal(d.Responders, set) && age >= 0 && age < limit
}

// models returns the offered models: the cache while fresh, else a new
// discovery.
func models(c *sdk.Call) ([]ipc.ModelEntry, error) {
	set, err := responders(c)
	if err != nil {
		return nil, err
	}
	if cached, ok := loadCache(c); ok && cached.fresh(set, c.Now()) {
		return cached.Entries, nil
	}
	found, err := discover(c, false)
	return found.Entries, err
}

// responders are the capsules intercepting the describe topic, sorted,
// without the registry itself.
func responders(c *sdk.Call) ([]string, error) {
	ids, err := c.Interceptors(ipc.LLMRequestDescribeTopic)
	if err != nil {
		return nil, fmt.Errorf("who intercepts %s: %w", ipc.LLMRequestDescribeTopic, err)
	}
	out := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == c.CapsuleID() })
	slices.Sort(out)
	return slices.Compact(out), nil
}

// discover runs the describe fan-out and caches its result (for less
// long when some responder did not answer). refresh asks the providers to
// read their servers' model lists afresh, and waits refreshWindow for
// them.
func discover(c *sdk.Call, refresh bool) (discovery, error) {
	set, err := responders(c)
	if err != nil {
		return discovery{}, err
	}
	found := discovery{Responders: set, CollectedUnixMs: c.Now().UnixMilli()}
	if len(set) == 0 {
		storeCache(c, found)
		return found, nil
	}
	sub, err := c.Subscribe(ipc.LLMResponseDescribeTopic)
	if err != nil {
		return found, err
	}
	defer func() { _ = c.Unsubscribe(sub) }()
	ask, window := []byte(`{}`), describeWindow
	if refresh {
		ask, window = []byte(`{"refresh":true}`), refreshWindow
	}
	if err := c.Publish(ipc.LLMRequestDescribeTopic, ask); err != nil {
		return found, fmt.Errorf("asking the providers: %w", err)
	}
	answers := map[string][]ipc.ModelEntry{}
	owners := map[string][]string{} // request topic → its interceptors
	missing, err := sdk.Gather(c, sub, set, window, func(msg hostapi.Message, awaited bool) bool {
		if !awaited {
			return false
		}
		answers[msg.SourceID] = accept(c, msg, owners)
		return true
	})
	if err != nil {
		return found, fmt.Errorf("reading the providers' answers: %w", err)
	}
	seen := map[string]bool{}
	for _, id := range set { // sorted: the same order whichever answered first
		for _, e := range answers[id] {
			if seen[e.ID] {
				c.Log(hostapi.LogWarn, fmt.Sprintf("registry: %s also offers %s; the first offer is kept", id, e.ID))
				continue
			}
			seen[e.ID] = true
			found.Entries = append(found.Entries, e)
		}
	}
	found.Missing = missing
	if len(missing) > 0 {
		c.Log(hostapi.LogWarn, fmt.Sprintf("registry: capsules %s did not describe their models within %v; their models are left out for up to %v",
			strings.Join(missing, ", "), window, partialCacheMaxAge))
	}
	storeCache(c, found)
	return found, nil
}

// accept turns one describe answer into model entries, keeping only those
// whose request topic the answering capsule intercepts (owners caches
// Interceptors per topic for this discovery).
func accept(c *sdk.Call, msg hostapi.Message, owners map[string][]string) []ipc.ModelEntry {
	src := msg.SourceID
	var resp struct {
		Providers []json.RawMessage `json:"providers"`
	}
	if err := json.Unmarshal(msg.Payload, &resp); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("registry: %s answered describe without a providers list: %v", src, err))
		return nil
	}
	var out []ipc.ModelEntry
	for i, raw := range resp.Providers {
		var d describeEntry
		if err := json.Unmarshal(raw, &d); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("registry: entry %d of %s left out: %v", i, src, err))
			continue
		}
		e, err := entry(d, src)
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("registry: entry %d of %s left out: %v", i, src, err))
			continue
		}
		who, ok := owners[e.RequestTopic]
		if !ok {
			var err error
			if who, err = c.Interceptors(e.RequestTopic); err != nil {
				c.Log(hostapi.LogWarn, fmt.Sprintf("registry: entry %s of %s left out: who intercepts %s: %v", e.ID, src, e.RequestTopic, err))
				continue
			}
			owners[e.RequestTopic] = who
		}
		if !slices.Contains(who, src) {
			c.Log(hostapi.LogWarn, fmt.Sprintf("registry: entry %s of %s left out: %s does not intercept %s (its interceptors: %s)",
				e.ID, src, src, e.RequestTopic, strings.Join(who, ", ")))
			continue
		}
		out = append(out, e)
	}
	return out
}

// entry checks a describe entry and names it canonically.
func entry(d describeEntry, capsule string) (ipc.ModelEntry, error) {
	const prefix = "llm.v1.request.generate."
	provider, ok := strings.CutPrefix(d.RequestTopic, prefix)
	if !ok || provider == "" || strings.Contains(provider, ".") || ipc.ValidateTopic(d.RequestTopic) != nil {
		return ipc.ModelEntry{}, fmt.Errorf("request_topic %q is not %s<provider>", d.RequestTopic, prefix)
	}
	if d.StreamTopic != "" && d.StreamTopic != ipc.LLMStreamTopic(provider) {
		return ipc.ModelEntry{}, fmt.Errorf("stream_topic %q is not %s", d.StreamTopic, ipc.LLMStreamTopic(provider))
	}
	// An id may already be canonical for this provider.
	model := strings.TrimPrefix(d.ID, provider+":")
	if err := ipc.ValidModelID(model); err != nil {
		return ipc.ModelEntry{}, err
	}
	e := ipc.ModelEntry{
		ID: provider + ":" + model, Provider: provider, Model: model, Capsule: capsule,
		Description: d.Description, Capabilities: d.Capabilities,
		RequestTopic: d.RequestTopic, StreamTopic: ipc.LLMStreamTopic(provider),
		ContextWindow: d.ContextWindow, MaxOutputTokens: d.MaxOutputTokens,
		Ready: d.Ready == nil || *d.Ready,
		Note:  strings.TrimSpace(d.Note),
	}
	if !e.Ready {
		e.Why = strings.TrimSpace(d.Why)
		if e.Why == "" {
			e.Why = "the provider says it is not ready"
		}
	}
	return e, nil
}

// cacheKey is where this request's list is cached: per principal (the
// KV is), and per client settings when the request carries some (a
// client's own key makes its provider ready for that client only).
func cacheKey(c *sdk.Call) string {
	if fp, _ := c.Config(hostapi.RequestSettingsKey); fp != "" {
		return keyCache + "." + fp
	}
	return keyCache
}

func loadCache(c *sdk.Call) (discovery, bool) {
	var d discovery
	b, ok, err := c.KVGet(cacheKey(c))
	if err != nil {
		c.Log(hostapi.LogWarn, "registry: provider cache unreadable: "+err.Error())
		return d, false
	}
	if !ok || json.Unmarshal(b, &d) != nil {
		return discovery{}, false
	}
	return d, true
}

func storeCache(c *sdk.Call, d discovery) {
	b, err := json.Marshal(d)
	if err == nil {
		err = c.KVSet(cacheKey(c), b)
	}
	if err != nil {
		c.Log(hostapi.LogWarn, "registry: provider list not cached: "+err.Error())
	}
}
