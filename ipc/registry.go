package ipc

import (
	"fmt"
	"strings"
	"unicode"
)

// The provider registry's protocol (spec/capsules-cli.md §6.5;
// capsules/registry): requests carry a correlation_id and are answered on
// RegistryResponseTopic(op, correlation_id).
const (
	// RegistryGetProvidersTopic asks for every model the loaded providers
	// offer ({correlation_id}).
	RegistryGetProvidersTopic = "registry.v1.get_providers"
	// RegistryGetActiveModelTopic asks for the invoking principal's active
	// model ({correlation_id}).
	RegistryGetActiveModelTopic = "registry.v1.get_active_model"
	// RegistrySetActiveModelTopic chooses it ({correlation_id, model_id}).
	RegistrySetActiveModelTopic = "registry.v1.set_active_model"
	// RegistryUnsetActiveModelTopic forgets the choice, so the default
	// applies again ({correlation_id}).
	RegistryUnsetActiveModelTopic = "registry.v1.unset_active_model"
	// RegistryActiveModelChangedTopic announces a principal's new active
	// model (a ModelEntry; null when the choice was unset).
	RegistryActiveModelChangedTopic = "registry.v1.active_model_changed"
	// RegistryResponsePattern matches every answer of the registry.
	RegistryResponsePattern = "registry.v1.response.*"
)

// The op names of the registry's scoped replies.
const (
	RegistryOpGetProviders     = "get_providers"
	RegistryOpGetActiveModel   = "get_active_model"
	RegistryOpSetActiveModel   = "set_active_model"
	RegistryOpUnsetActiveModel = "unset_active_model"
)

// RegistryResponseTopic is the registry's answer to operation op with
// correlation id c: registry.v1.response.<op>.<c>.
func RegistryResponseTopic(op, c string) string { return "registry.v1.response." + op + "." + c }

// ModelEntry is one model as the registry lists it: a provider's describe
// entry (spec §6.1 ProviderEntry) checked and named canonically.
type ModelEntry struct {
	// ID is canonical: "<provider>:<model>".
	ID string `json:"id"`
	// Provider is the last segment of the generate topic (openai,
	// anthropic, replay).
	Provider string `json:"provider"`
	// Model is what a generate request's model field carries.
	Model string `json:"model"`
	// Capsule is the capsule that answered describe and intercepts
	// RequestTopic (the kernel stamped it; no provider chooses it).
	Capsule         string   `json:"capsule"`
	Description     string   `json:"description,omitempty"`
	Capabilities    []string `json:"capabilities,omitempty"`
	RequestTopic    string   `json:"request_topic"`
	StreamTopic     string   `json:"stream_topic"`
	ContextWindow   uint64   `json:"context_window,omitempty"`
	MaxOutputTokens uint64   `json:"max_output_tokens,omitempty"`
	// Ready is false when the provider said it cannot serve a request yet
	// (no api key, say); Why then names the command that fixes it.
	Ready bool   `json:"ready"`
	Why   string `json:"why,omitempty"`
	// Note is the provider's word on its list, such as its server's
	// model list not being read and what is listed instead.
	Note string `json:"note,omitempty"`
}

// SplitModelID splits a canonical model id "<provider>:<model>" at its
// first ':'; ok is false when either side is empty.
func SplitModelID(id string) (provider, model string, ok bool) {
	provider, model, found := strings.Cut(id, ":")
	return provider, model, found && provider != "" && model != ""
}

// RegistryRequest is every registry request's payload; each op reads its
// own fields.
type RegistryRequest struct {
	CorrelationID string `json:"correlation_id"`
	// ModelID is set_active_model's canonical model id.
	ModelID string `json:"model_id,omitempty"`
}

// RegistryReply is every registry answer; each op fills its own fields.
type RegistryReply struct {
	CorrelationID string `json:"correlation_id"`
	// Error is set when the request failed; nothing else is then.
	Error string `json:"error,omitempty"`
	// Status is "ok" after set_active_model and unset_active_model.
	Status string `json:"status,omitempty"`
	// Providers (get_providers) lists every model offered, in discovery
	// order.
	Providers []ModelEntry `json:"providers,omitempty"`
	// ActiveModel is the model a turn without an explicit one uses (null
	// when no provider is loaded).
	ActiveModel *ModelEntry `json:"active_model"`
	// Chosen is true when the principal set ActiveModel, false when it is
	// the default.
	Chosen bool `json:"chosen"`
	// Note explains a choice that could not be honoured (the model set is
	// no longer offered, so the default answers).
	Note string `json:"note,omitempty"`
	// Missing names the describing capsules that did not answer in time.
	Missing []string `json:"missing,omitempty"`
}

// MaxModelIDLen bounds a model id: it travels in every request and is
// shown to people.
const MaxModelIDLen = 256

// ValidModelID refuses a model id that is empty, longer than
// MaxModelIDLen, or holds anything but visible characters (no spaces,
// control or format characters such as a right-to-left override): people
// choose by it, and it is sent upstream. The registry and the providers
// hold ids to this one rule.
func ValidModelID(m string) error {
	if m == "" || len(m) > MaxModelIDLen {
		return fmt.Errorf("model id %q: want 1 to %d bytes", m, MaxModelIDLen)
	}
	for _, r := range m {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("model id %q holds %q", m, r)
		}
	}
	return nil
}
