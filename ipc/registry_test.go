package ipc

import "testing"

func TestRegistryTopics(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{RegistryGetProvidersTopic, "registry.v1.get_providers"},
		{RegistryGetActiveModelTopic, "registry.v1.get_active_model"},
		{RegistrySetActiveModelTopic, "registry.v1.set_active_model"},
		{RegistryUnsetActiveModelTopic, "registry.v1.unset_active_model"},
		{RegistryActiveModelChangedTopic, "registry.v1.active_model_changed"},
		{RegistryResponseTopic(RegistryOpSetActiveModel, "c9"), "registry.v1.response.set_active_model.c9"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
		if err := ValidateTopic(tc.got); err != nil {
			t.Errorf("%q: %v", tc.got, err)
		}
	}
}

func TestSplitModelID(t *testing.T) {
	for _, tc := range []struct {
		id, provider, model string
		ok                  bool
	}{
		{"openai:gpt-4o", "openai", "gpt-4o", true},
		{"openai:llama3.1:8b", "openai", "llama3.1:8b", true},
		{"openai:", "openai", "", false},
		{":gpt-4o", "", "gpt-4o", false},
		{"gpt-4o", "gpt-4o", "", false},
		{"", "", "", false},
	} {
		p, m, ok := SplitModelID(tc.id)
		if p != tc.provider || m != tc.model || ok != tc.ok {
			t.Errorf("SplitModelID(%q) = %q, %q, %v", tc.id, p, m, ok)
		}
	}
}
