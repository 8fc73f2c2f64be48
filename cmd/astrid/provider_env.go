package main

import "github.com/astrid-go/astrid/internal/config"

// providerEnv maps the environment variables people already set for an
// LLM provider to that provider capsule's [env] keys. A value stored with
// `astrid capsule env set` wins; these fill in only what is unset, so
// `OPENAI_BASE_URL=http://localhost:11434/v1 astrid -p …` talks to Ollama.
var providerEnv = map[string]map[string]string{
	"astrid-capsule-openai": {
		"api_key":  "OPENAI_API_KEY",
		"base_url": "OPENAI_BASE_URL",
	},
	"astrid-capsule-anthropic": {
		"api_key":  "ANTHROPIC_API_KEY",
		"base_url": "ANTHROPIC_BASE_URL",
	},
}

// configFallback reads providerEnv's variables through getenv.
func configFallback(getenv func(string) string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for id, keys := range providerEnv {
		for key, name := range keys {
			if v := getenv(name); v != "" {
				if out[id] == nil {
					out[id] = map[string]string{}
				}
				out[id][key] = v
			}
		}
	}
	return out
}

// withHooks adds config.toml [hooks] to fallback as the hooks capsule's
// [env] hooks value (a value set with `astrid capsule env set` wins, as
// for every key).
func withHooks(fallback map[string]map[string]string, h config.Hooks) map[string]map[string]string {
	if !h.Configured() {
		return fallback
	}
	if fallback[config.HooksCapsuleID] == nil {
		fallback[config.HooksCapsuleID] = map[string]string{}
	}
	fallback[config.HooksCapsuleID][config.HooksConfigKey] = h.JSON()
	return fallback
}
