package uplinkwire

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// ProviderEnv maps the environment variables people already set for an LLM
// provider to that provider capsule's [env] keys (capsule id → key →
// variable). A client carries the ones set in its environment on its hello
// (Frame.Env); the daemon applies them to that connection's requests only,
// as an in-process kernel applies them to its own: a value stored with
// `astrid capsule env set` wins, these fill in what is unset.
var ProviderEnv = map[string]map[string]string{
	"astrid-capsule-openai": {
		"api_key":  "OPENAI_API_KEY",
		"base_url": "OPENAI_BASE_URL",
	},
	"astrid-capsule-anthropic": {
		"api_key":  "ANTHROPIC_API_KEY",
		"base_url": "ANTHROPIC_BASE_URL",
	},
}

// MaxEnvValue bounds one carried value.
const MaxEnvValue = 8192

// EnvNames are ProviderEnv's variables, sorted.
func EnvNames() []string {
	var out []string
	for _, keys := range ProviderEnv {
		for _, name := range keys {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// ReadEnv returns ProviderEnv's variables that getenv has set, their
// surrounding white space trimmed (a key read from a file keeps no final
// newline), or an error naming the first that holds a control character or
// is too long. Only the variable's name is ever shown, never its value.
func ReadEnv(getenv func(string) string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range EnvNames() {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		if err := checkEnvValue(name, v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// CheckEnv checks a hello's Env: only ProviderEnv's variables, each value
// as ReadEnv leaves it.
func CheckEnv(env map[string]string) error {
	known := map[string]bool{}
	for _, name := range EnvNames() {
		known[name] = true
	}
	for name, v := range env {
		if !known[name] {
			return fmt.Errorf("%.64q is not a provider setting a client may carry (%s)", name, strings.Join(EnvNames(), ", "))
		}
		if err := checkEnvValue(name, v); err != nil {
			return err
		}
	}
	return nil
}

func checkEnvValue(name, v string) error {
	if len(v) > MaxEnvValue {
		return fmt.Errorf("%s is %d bytes, the limit is %d", name, len(v), MaxEnvValue)
	}
	for _, r := range v {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			what := "a control character"
			if r == '\n' || r == '\r' {
				what = "a line break"
			}
			return fmt.Errorf("%s holds %s inside its value (a key or URL is one line; check how it was set)", name, what)
		}
	}
	return nil
}

// ScopeConfig turns a checked Env into capsule [env] values: capsule id →
// key → value.
func ScopeConfig(env map[string]string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for id, keys := range ProviderEnv {
		for key, name := range keys {
			if v, ok := env[name]; ok && v != "" {
				if out[id] == nil {
					out[id] = map[string]string{}
				}
				out[id][key] = v
			}
		}
	}
	return out
}
