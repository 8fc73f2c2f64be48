package openai

import "encoding/json"

// maxListedWindow bounds a window read from a model list (tokens): a
// larger figure is no window any model has, and is ignored.
const maxListedWindow = 1 << 30

// modelWindow is the context window an entry of a server's model list
// states, 0 when it states none. OpenAI's own list says nothing; the
// servers operators run do, each in its own field: vLLM max_model_len,
// OpenRouter and others context_length, LM Studio max_context_length,
// llama.cpp meta.n_ctx_train.
func modelWindow(raw string) uint64 {
	if raw == "" {
		return 0
	}
	var e struct {
		MaxModelLen      json.Number `json:"max_model_len"`
		ContextLength    json.Number `json:"context_length"`
		MaxContextLength json.Number `json:"max_context_length"`
		Meta             struct {
			NCtxTrain json.Number `json:"n_ctx_train"`
		} `json:"meta"`
	}
	if json.Unmarshal([]byte(raw), &e) != nil {
		return 0
	}
	for _, n := range []json.Number{e.MaxModelLen, e.ContextLength, e.MaxContextLength, e.Meta.NCtxTrain} {
		if v, err := n.Int64(); err == nil && v > 0 && v <= maxListedWindow {
			return uint64(v)
		}
	}
	return 0
}
