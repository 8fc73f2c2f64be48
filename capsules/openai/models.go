package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// KnownModels are the well-known OpenAI model ids this provider lists for
// api.openai.com until the server's own list (GET /v1/models) has been read:
// current Chat Completions models (openai-go's shared.ChatModel), the
// default first. A server of the operator's own has no such list: only
// what it says it serves, and the configured model.
var KnownModels = []string{DefaultModel, "gpt-5.5", "gpt-5.4", "gpt-5.4-nano"}

// The server's model list (docs/rationale/providers.md, "Which models does a provider
// list?").
const (
	// modelsFetchTimeout bounds GET /v1/models; the registry waits
	// longer than this for a describe that asks to refresh.
	modelsFetchTimeout = 2 * time.Second
	// modelsMaxAge is how long a list read from the server is not asked
	// again by a refreshing describe.
	modelsMaxAge = time.Minute
	// maxModelsBody and maxModels bound what is read and kept.
	maxModelsBody = 1 << 20
	maxModels     = 200
	// keyModels holds the list in the principal's durable KV: a model a
	// person chose from it stays offered in the next process.
	keyModels = "openai.models"
)

// modelCache is the server's list as last read.
type modelCache struct {
	// Source names the server and key the list was read with (a hash: the
	// key itself is never stored here).
	Source        string   `json:"source"`
	Models        []string `json:"models"`
	FetchedUnixMs int64    `json:"fetched_unix_ms"`
}

// describeRequest is what a describe may ask: refresh is set when a
// person asked for the list (astrid models list, models set), who waits
// for it; a turn's describe never makes a request.
type describeRequest struct {
	Refresh bool `json:"refresh"`
}

// source identifies the server and credentials a list belongs to.
// (FNV-1a: the list is no secret, the hash only tells keys apart without
// storing one.)
func (s settings) source() string {
	h := uint64(14695981039346656037)
	for _, b := range []byte(s.baseURL + "\x00" + s.apiKey) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return strconv.FormatUint(h, 16)
}

// cachedModels is the list read from this server, if any.
func cachedModels(c *sdk.Call, s settings) (modelCache, bool) {
	b, ok, err := c.KVGet(keyModels)
	if err != nil || !ok {
		return modelCache{}, false
	}
	var m modelCache
	if json.Unmarshal(b, &m) != nil || m.Source != s.source() || len(m.Models) == 0 {
		return modelCache{}, false
	}
	return m, true
}

// offeredModels is what describe lists: the configured model first, then
// the server's list when it has been read, else the well-known ids for
// OpenAI itself. When refresh is set and the list is older than
// modelsMaxAge, the server is asked first (bounded by
// modelsFetchTimeout; a failure keeps what was known, logged).
func offeredModels(c *sdk.Call, s settings, refresh bool) []string {
	cached, ok := cachedModels(c, s)
	if refresh && s.notReady() == "" && (!ok || c.Now().Sub(time.UnixMilli(cached.FetchedUnixMs)) >= modelsMaxAge) {
		if fresh, err := fetchModels(c, s); err != nil {
			c.Log(hostapi.LogWarn, "openai: the model list of "+s.host()+" was not read: "+err.Error())
		} else {
			cached, ok = fresh, true
		}
	}
	var out []string
	if s.model != "" {
		out = append(out, s.model)
	}
	switch {
	case ok:
		out = append(out, cached.Models...)
	case !s.custom:
		out = append(out, KnownModels...)
	}
	return dedup(out)
}

// firstServed is the model to ask for when neither the request nor the
// configuration names one: the first the server lists (read now if it was
// never read), "" when it lists none.
func firstServed(c *sdk.Call, s settings) string {
	cached, ok := cachedModels(c, s)
	if !ok {
		var err error
		if cached, err = fetchModels(c, s); err != nil {
			c.Log(hostapi.LogWarn, "openai: the model list of "+s.host()+" was not read: "+err.Error())
			return ""
		}
	}
	return cached.Models[0]
}

// fetchModels asks the server which models it serves (GET <base>/models,
// OpenAI's, Ollama's, vLLM's and llama.cpp's shape) and keeps the answer.
func fetchModels(c *sdk.Call, s settings) (modelCache, error) {
	client, err := c.HTTPClient()
	if err != nil {
		return modelCache{}, err
	}
	ctx, cancel := context.WithTimeout(c.Context(), modelsFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.baseURL+"/models", nil)
	if err != nil {
		return modelCache{}, err
	}
	if s.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return modelCache{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return modelCache{}, fmt.Errorf("GET /models answered %s", resp.Status)
	}
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxModelsBody)).Decode(&body); err != nil {
		return modelCache{}, fmt.Errorf("GET /models: %w", err)
	}
	listed := make([]string, len(body.Data))
	for i, d := range body.Data {
		listed[i] = d.ID
	}
	ids := filterModels(s.custom, listed)
	if len(ids) == 0 {
		return modelCache{}, fmt.Errorf("GET /models listed no model")
	}
	m := modelCache{Source: s.source(), Models: ids, FetchedUnixMs: c.Now().UnixMilli()}
	if b, err := json.Marshal(m); err == nil {
		if err := c.KVSet(keyModels, b); err != nil {
			c.Log(hostapi.LogWarn, "openai: the model list was not kept: "+err.Error())
		}
	}
	return m, nil
}

// filterModels keeps the ids that can be shown and chosen, at most
// maxModels: a server of the operator's (custom) in its order, OpenAI's
// chat models only, sorted.
func filterModels(custom bool, listed []string) []string {
	var ids []string
	for _, id := range listed {
		if visible(id) && (custom || chatModel(id)) {
			ids = append(ids, id)
		}
	}
	if !custom {
		slices.Sort(ids) // OpenAI's order is no order
	}
	ids = dedup(ids)
	if len(ids) > maxModels {
		ids = ids[:maxModels]
	}
	return ids
}

// chatModel reports whether one of OpenAI's ids names a model Chat
// Completions serves (its list also holds embeddings, speech, images).
func chatModel(id string) bool {
	if !strings.HasPrefix(id, "gpt-") && !(len(id) > 1 && id[0] == 'o' && id[1] >= '1' && id[1] <= '9') && !strings.HasPrefix(id, "chatgpt-") {
		return false
	}
	for _, not := range []string{"audio", "realtime", "tts", "transcribe", "image", "search", "embedding"} {
		if strings.Contains(id, not) {
			return false
		}
	}
	return true
}

// visible reports whether id can be shown and chosen: 1 to 256 bytes of
// visible characters (the registry's rule).
func visible(id string) bool {
	if id == "" || len(id) > 256 {
		return false
	}
	for _, r := range id {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}

func dedup(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
