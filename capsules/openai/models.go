package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/modellist"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// KnownModels are the well-known OpenAI model ids this provider lists for
// api.openai.com until the server's own list (GET /v1/models) has been read:
// current Chat Completions models (openai-go's shared.ChatModel), the
// default first. A server of the operator's own has no such list: only
// what it says it serves, and the configured model.
var KnownModels = []string{DefaultModel, "gpt-5.5", "gpt-5.4", "gpt-5.4-nano"}

// keyModels holds the server's list (a modellist.Cache) in the principal's
// durable KV: a model a person chose from it stays offered in the next
// process (docs/rationale/providers.md, "Which models does a provider
// list?").
const keyModels = "openai.models"

// describeRequest is what a describe may ask: refresh is set when a
// person asked for the list (astrid models list, models set), who waits
// for it; a turn's describe never makes a request.
type describeRequest struct {
	Refresh bool `json:"refresh"`
}

// source identifies the server and credentials a list belongs to.
func (s settings) source() string { return modellist.Source(s.baseURL, s.apiKey) }

// cachedModels is the list read from this server, if any.
func cachedModels(c *sdk.Call, s settings) (modellist.Cache, bool) {
	b, ok, err := c.KVGet(keyModels)
	if err != nil || !ok {
		return modellist.Cache{}, false
	}
	return modellist.Decode(b, s.source())
}

// offeredModels is what describe lists: the configured model first, then
// the server's list when it has been read, else the well-known ids for
// OpenAI itself. When refresh is set and the list is older than
// modelsMaxAge, the server is asked first (bounded by
// modellist.FetchTimeout); a server that does not answer keeps what was
// known, and note says so, for the person who asked for the list.
func offeredModels(c *sdk.Call, s settings, refresh bool) (models []string, windows map[string]uint64, note string) {
	cached, ok := cachedModels(c, s)
	if refresh && s.notReady() == "" && (!ok || cached.Stale(c.Now())) {
		if fresh, err := fetchModels(c, s); err != nil {
			note = fallbackNote(s, ok, err)
			c.Log(hostapi.LogWarn, "openai: "+note)
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
		windows = cached.Windows
	case !s.custom:
		out = append(out, KnownModels...)
	}
	return modellist.Dedup(out), windows, note
}

// fallbackNote says what a person sees instead of the server's list.
func fallbackNote(s settings, hadList bool, err error) string {
	instead := "only the configured model is listed"
	switch {
	case hadList:
		instead = "the list read earlier is kept"
	case !s.custom:
		instead = "OpenAI's well-known ids are listed"
	case s.model == "":
		instead = "no model is listed (name one: --model, or [env] model)"
	}
	return fmt.Sprintf("the model list of %s was not read (%v); %s", s.host(), err, instead)
}

// servedModel is the model to ask for when neither the request nor the
// configuration names one: the server's only model (its list read now if
// it was never read). A server serving several cannot be guessed for: the
// error names them and how to choose.
func servedModel(c *sdk.Call, s settings) (string, error) {
	cached, ok := cachedModels(c, s)
	if !ok {
		var err error
		if cached, err = fetchModels(c, s); err != nil {
			return "", fmt.Errorf("no model named, none configured, and the model list of %s was not read (%w): name one with --model, astrid models set %s:<model> or [env] model", s.host(), err, Provider)
		}
	}
	if len(cached.Models) == 1 {
		return cached.Models[0], nil
	}
	shown := cached.Models[:min(len(cached.Models), 5)]
	more := ""
	if len(cached.Models) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(cached.Models)-len(shown))
	}
	return "", fmt.Errorf("no model named and none configured, and %s serves %d (%s%s): choose one with --model, astrid models set %s:<model> or [env] model", s.host(), len(cached.Models), strings.Join(shown, ", "), more, Provider)
}

// fetchModels asks the server which models it serves (GET <base>/models
// through openai-go: OpenAI's, Ollama's, vLLM's and llama.cpp's shape)
// and keeps the answer. The request is bounded in time by
// modellist.FetchTimeout and in size by modellist.MaxBody, so a stalled or
// flooding server costs the person a short wait, never a hang.
func fetchModels(c *sdk.Call, s settings) (modellist.Cache, error) {
	client, err := c.HTTPClient()
	if err != nil {
		return modellist.Cache{}, err
	}
	ctx, cancel := context.WithTimeout(c.Context(), modellist.FetchTimeout)
	defer cancel()
	opts := []option.RequestOption{
		option.WithBaseURL(s.baseURL),
		option.WithHTTPClient(modellist.Client(client)),
		option.WithMaxRetries(0),
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	svc := oai.NewModelService(opts...)
	page, err := svc.List(ctx)
	if err != nil {
		if ctx.Err() != nil && c.Context().Err() == nil {
			return modellist.Cache{}, fmt.Errorf("GET /models: no answer within %s", modellist.FetchTimeout)
		}
		return modellist.Cache{}, fmt.Errorf("GET /models: %w", err)
	}
	listed := make([]string, len(page.Data))
	windows := map[string]uint64{}
	for i, d := range page.Data {
		listed[i] = d.ID
		if w := modelWindow(d.RawJSON()); w > 0 {
			windows[d.ID] = w
		}
	}
	ids := filterModels(s.custom, listed)
	if len(ids) == 0 {
		return modellist.Cache{}, fmt.Errorf("GET /models listed no model")
	}
	m := modellist.Cache{Source: s.source(), Models: ids, FetchedUnixMs: c.Now().UnixMilli()}
	for _, id := range ids {
		if w, ok := windows[id]; ok {
			if m.Windows == nil {
				m.Windows = map[string]uint64{}
			}
			m.Windows[id] = w
		}
	}
	if b, err := json.Marshal(m); err == nil {
		if err := c.KVSet(keyModels, b); err != nil {
			c.Log(hostapi.LogWarn, "openai: the model list was not kept: "+err.Error())
		}
	}
	return m, nil
}

// filterModels keeps the ids that can be shown and chosen, at most
// modellist.MaxModels: a server of the operator's (custom) in its order, OpenAI's
// chat models only, sorted.
func filterModels(custom bool, listed []string) []string {
	var ids []string
	for _, id := range listed {
		if ipc.ValidModelID(id) == nil && (custom || chatModel(id)) {
			ids = append(ids, id)
		}
	}
	if !custom {
		slices.Sort(ids) // OpenAI's order is no order
	}
	ids = modellist.Dedup(ids)
	if len(ids) > modellist.MaxModels {
		ids = ids[:modellist.MaxModels]
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
