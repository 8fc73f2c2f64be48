package main

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
