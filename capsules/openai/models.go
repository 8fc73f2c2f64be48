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

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

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
// modelsFetchTimeout); a server that does not answer keeps what was
// known, and note says so, for the person who asked for the list.
func offeredModels(c *sdk.Call, s settings, refresh bool) (models []string, note string) {
	cached, ok := cachedModels(c, s)
	if refresh && s.notReady() == "" && (!ok || c.Now().Sub(time.UnixMilli(cached.FetchedUnixMs)) >= modelsMaxAge) {
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
	case !s.custom:
		out = append(out, KnownModels...)
	}
	return dedup(out), note
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
// modelsFetchTimeout and in size by maxModelsBody, so a stalled or
// flooding server costs the person a short wait, never a hang.
func fetchModels(c *sdk.Call, s settings) (modelCache, error) {
	client, err := c.HTTPClient()
	if err != nil {
		return modelCache{}, err
	}
	ctx, cancel := context.WithTimeout(c.Context(), modelsFetchTimeout)
	defer cancel()
	opts := []option.RequestOption{
		option.WithBaseURL(s.baseURL),
		option.WithHTTPClient(&http.Client{Transport: limitedTransport{base: client.Transport, max: maxModelsBody}, CheckRedirect: client.CheckRedirect}),
		option.WithMaxRetries(0),
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	svc := oai.NewModelService(opts...)
	page, err := svc.List(ctx)
	if err != nil {
		if ctx.Err() != nil && c.Context().Err() == nil {
			return modelCache{}, fmt.Errorf("GET /models: no answer within %s", modelsFetchTimeout)
		}
		return modelCache{}, fmt.Errorf("GET /models: %w", err)
	}
	listed := make([]string, len(page.Data))
	for i, d := range page.Data {
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

// limitedTransport refuses a response body past max bytes: the SDK reads
// a list whole, and a server may send without end. A 2xx answer with no
// content type or text/plain (a small server that never set one: Go's
// sniffer says text/plain for JSON) is handed to the SDK as JSON, which
// parses it or says why not; HTML and the like stay refused.
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
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode/100 == 2 && (ct == "" || strings.HasPrefix(ct, "text/plain")) {
		resp.Header.Set("Content-Type", "application/json")
	}
	return resp, nil
}

type limitedBody struct {
	body io.ReadCloser
	left int64
}

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

var errBodyTooLarge = fmt.Errorf("the answer is larger than %d bytes", maxModelsBody)

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
