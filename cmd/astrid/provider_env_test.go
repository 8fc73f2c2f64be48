package main

import (
	"testing"
)

func TestConfigFallbackReadsTheProvidersVariables(t *testing.T) {
	env := map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": ""}
	got := configFallback(func(k string) string { return env[k] })
	if got["astrid-capsule-openai"]["base_url"] != "http://localhost:11434/v1" || got["astrid-capsule-anthropic"]["api_key"] != "sk-ant" {
		t.Fatalf("fallback = %v", got)
	}
	if _, set := got["astrid-capsule-openai"]["api_key"]; set {
		t.Fatalf("an empty variable became a value: %v", got)
	}
}
