package anthropic

import (
	"context"
	"encoding/json"
	"fmt"

	sdkapi "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/modellist"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The API's model list, GET /v1/models (docs/rationale/providers.md,
// "Which models does a provider list, and when does it ask its server?"):
// read only when a person asks for the list, bounded in time and size,
// kept in the principal's durable KV.
const (
	// modelsPageLimit is the one page asked for: the API's largest, far
	// more than the models it serves, so no paging is needed.
	modelsPageLimit = 1000
	// maxListedWindow bounds a window read from the list (tokens).
	maxListedWindow = 1 << 30
	// keyModels holds the list (a modellist.Cache) in the principal's
	// durable KV.
	keyModels = "anthropic.models"
)

// describeRequest is what a describe may ask: refresh, when a person
// asked for the list (astrid models list, models set) and waits for it.
type describeRequest struct {
	Refresh bool `json:"refresh"`
}

// source tells the base URL and key a list was read with apart.
func (s settings) source() string { return modellist.Source(s.baseURL, s.apiKey) }

func cachedModels(c *sdk.Call, s settings) (modellist.Cache, bool) {
	b, ok, err := c.KVGet(keyModels)
	if err != nil || !ok {
		return modellist.Cache{}, false
	}
	return modellist.Decode(b, s.source())
}

// offeredModels is what describe lists: the configured model first, then
// the API's list when it has been read, else KnownModels. With refresh, a
// list older than modelsMaxAge is read first; when that fails, note says
// so and what is listed instead.
func offeredModels(c *sdk.Call, s settings, refresh bool) (models []string, windows map[string]uint64, note string) {
	cached, ok := cachedModels(c, s)
	if ready, _ := s.ready(); refresh && ready && (!ok || cached.Stale(c.Now())) {
		if fresh, err := fetchModels(c, s); err != nil {
			instead := "the current well-known Claude ids are listed"
			if ok {
				instead = "the list read earlier is kept"
			}
			note = fmt.Sprintf("the model list of %s was not read (%v); %s", s.host(), err, instead)
			c.Log(hostapi.LogWarn, "anthropic: "+note)
		} else {
			cached, ok = fresh, true
		}
	}
	out := []string{s.model}
	if ok {
		out = append(out, cached.Models...)
		windows = cached.Windows
	} else {
		out = append(out, KnownModels...)
	}
	return modellist.Dedup(out), windows, note
}

// fetchModels reads GET /v1/models through the SDK over the host's
// egress client and keeps the answer.
func fetchModels(c *sdk.Call, s settings) (modellist.Cache, error) {
	egress, err := c.HTTPClient()
	if err != nil {
		return modellist.Cache{}, err
	}
	ctx, cancel := context.WithTimeout(c.Context(), modellist.FetchTimeout)
	defer cancel()
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(modellist.Client(egress)),
		option.WithBaseURL(s.apiBase()),
		option.WithMaxRetries(0),
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	svc := sdkapi.NewModelService(opts...)
	page, err := svc.List(ctx, sdkapi.ModelListParams{Limit: sdkapi.Int(modelsPageLimit)})
	if err != nil {
		if ctx.Err() != nil && c.Context().Err() == nil {
			return modellist.Cache{}, fmt.Errorf("GET /v1/models: no answer within %s", modellist.FetchTimeout)
		}
		return modellist.Cache{}, fmt.Errorf("GET /v1/models: %w", err)
	}
	var ids []string
	windows := map[string]uint64{}
	for _, m := range page.Data {
		if ipc.ValidModelID(m.ID) == nil {
			ids = append(ids, m.ID)
			if m.MaxInputTokens > 0 && m.MaxInputTokens <= maxListedWindow {
				windows[m.ID] = uint64(m.MaxInputTokens)
			}
		}
	}
	ids = modellist.Dedup(ids)
	if len(ids) > modellist.MaxModels {
		ids = ids[:modellist.MaxModels]
	}
	if len(ids) == 0 {
		return modellist.Cache{}, fmt.Errorf("GET /v1/models listed no model")
	}
	m := modellist.Cache{Source: s.source(), Models: ids, FetchedUnixMs: c.Now().UnixMilli()}
	if len(windows) > 0 {
		m.Windows = windows
	}
	if b, err := json.Marshal(m); err == nil {
		if err := c.KVSet(keyModels, b); err != nil {
			c.Log(hostapi.LogWarn, "anthropic: the model list was not kept: "+err.Error())
		}
	}
	return m, nil
}
