package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode"

	sdkapi "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// The API's model list, GET /v1/models (docs/rationale/providers.md,
// "Which models does a provider list, and when does it ask its server?"):
// read only when a person asks for the list, bounded in time and size,
// kept in the principal's durable KV.
const (
	// modelsFetchTimeout bounds the request; the registry waits longer
	// for a describe that asks to refresh.
	modelsFetchTimeout = 2 * time.Second
	// modelsMaxAge is how long a list read is not asked for again.
	modelsMaxAge = time.Minute
	// modelsPageLimit is the one page asked for: the API's largest, far
	// more than the models it serves, so no paging is needed.
	modelsPageLimit = 1000
	maxModelsBody   = 1 << 20
	maxModels       = 200
	keyModels       = "anthropic.models"
)

// modelCache is the API's list as last read.
type modelCache struct {
	// Source tells the base URL and key the list was read with apart (a
	// hash: the key itself is not stored).
	Source        string   `json:"source"`
	Models        []string `json:"models"`
	FetchedUnixMs int64    `json:"fetched_unix_ms"`
}

// describeRequest is what a describe may ask: refresh, when a person
// asked for the list (astrid models list, models set) and waits for it.
type describeRequest struct {
	Refresh bool `json:"refresh"`
}

// source is an FNV-1a hash of the base URL and key.
func (s settings) source() string {
	h := uint64(14695981039346656037)
	for _, b := range []byte(s.baseURL + "\x00" + s.apiKey) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return strconv.FormatUint(h, 16)
}

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
// the API's list when it has been read, else KnownModels. With refresh, a
// list older than modelsMaxAge is read first; when that fails, note says
// so and what is listed instead.
func offeredModels(c *sdk.Call, s settings, refresh bool) (models []string, note string) {
	cached, ok := cachedModels(c, s)
	if ready, _ := s.ready(); refresh && ready && (!ok || c.Now().Sub(time.UnixMilli(cached.FetchedUnixMs)) >= modelsMaxAge) {
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
	} else {
		out = append(out, KnownModels...)
	}
	return dedup(out), note
}

// fetchModels reads GET /v1/models through the SDK over the host's
// egress client and keeps the answer.
func fetchModels(c *sdk.Call, s settings) (modelCache, error) {
	egress, err := c.HTTPClient()
	if err != nil {
		return modelCache{}, err
	}
	ctx, cancel := context.WithTimeout(c.Context(), modelsFetchTimeout)
	defer cancel()
	httpClient := &http.Client{Transport: limitedTransport{base: egress.Transport, max: maxModelsBody}, CheckRedirect: egress.CheckRedirect}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(httpClient),
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
			return modelCache{}, fmt.Errorf("GET /v1/models: no answer within %s", modelsFetchTimeout)
		}
		return modelCache{}, fmt.Errorf("GET /v1/models: %w", err)
	}
	var ids []string
	for _, m := range page.Data {
		if visible(m.ID) {
			ids = append(ids, m.ID)
		}
	}
	ids = dedup(ids)
	if len(ids) > maxModels {
		ids = ids[:maxModels]
	}
	if len(ids) == 0 {
		return modelCache{}, fmt.Errorf("GET /v1/models listed no model")
	}
	m := modelCache{Source: s.source(), Models: ids, FetchedUnixMs: c.Now().UnixMilli()}
	if b, err := json.Marshal(m); err == nil {
		if err := c.KVSet(keyModels, b); err != nil {
			c.Log(hostapi.LogWarn, "anthropic: the model list was not kept: "+err.Error())
		}
	}
	return m, nil
}

// limitedTransport refuses a response body past max bytes: the SDK reads
// a list whole, and a server may send without end.
type limitedTransport struct {
	base http.RoundTripper
	max  int64
}

func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{body: resp.Body, left: t.max}
	return resp, nil
}

type limitedBody struct {
	body io.ReadCloser
	left int64
}

var errBodyTooLarge = fmt.Errorf("the answer is larger than %d bytes", maxModelsBody)

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }

// visible reports whether id can be shown and chosen (the registry's
// rule): 1 to 256 bytes of visible characters.
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
