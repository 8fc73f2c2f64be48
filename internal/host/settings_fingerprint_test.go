package host

import (
	"strings"
	"testing"
)

// Two clients' settings give two fingerprints, the same settings the same
// one, none gives "", and the fingerprint shows no value.
func TestSettingsFingerprint(t *testing.T) {
	a := &scopeEntry{Scope: Scope{Config: map[string]map[string]string{"astrid-capsule-openai": {"api_key": "sk-AAAA", "base_url": "http://a"}}}}
	a2 := &scopeEntry{Scope: Scope{Config: map[string]map[string]string{"astrid-capsule-openai": {"base_url": "http://a", "api_key": "sk-AAAA"}}}}
	b := &scopeEntry{Scope: Scope{Config: map[string]map[string]string{"astrid-capsule-openai": {"api_key": "sk-BBBB", "base_url": "http://a"}}}}
	fa, fa2, fb := settingsFingerprint(a), settingsFingerprint(a2), settingsFingerprint(b)
	if fa == "" || fa != fa2 || fa == fb {
		t.Fatalf("fingerprints %q %q %q", fa, fa2, fb)
	}
	if strings.Contains(fa, "AAAA") || len(fa) != 16 {
		t.Fatalf("fingerprint %q", fa)
	}
	if settingsFingerprint(nil) != "" || settingsFingerprint(&scopeEntry{}) != "" {
		t.Fatal("no settings must give no fingerprint")
	}
}
