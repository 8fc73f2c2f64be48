package store

import (
	"path/filepath"
	"testing"
)

// A principal's own [env] values are apart from the capsule-wide ones and
// from every other principal's; a secret sealed for one principal does not
// open as another's; purging the capsule forgets them all.
func TestPrincipalEnvIsOwnAndPurged(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetEnv("app", "REGION", false, []byte("shared")))
	must(s.SetPrincipalEnv("alice", "app", "REGION", false, []byte("alice's")))
	must(s.SetPrincipalEnv("alice", "app", "TOKEN", true, []byte("alice-token")))
	must(s.SetPrincipalEnv("bob", "other", "TOKEN", true, []byte("bob-token")))

	get := func(kv *KV, key string) string {
		t.Helper()
		v, ok, err := kv.Get(key)
		must(err)
		if !ok {
			return "<unset>"
		}
		return string(v)
	}
	if got := get(s.Config("app"), "REGION"); got != "shared" {
		t.Errorf("capsule-wide REGION = %q", got)
	}
	if got := get(s.PrincipalConfig("alice", "app"), "REGION"); got != "alice's" {
		t.Errorf("alice's REGION = %q", got)
	}
	if got := get(s.PrincipalConfig("bob", "app"), "REGION"); got != "<unset>" {
		t.Errorf("bob sees REGION %q", got)
	}
	if v, ok, err := s.PrincipalSecrets("alice", "app").Get("TOKEN"); err != nil || !ok || string(v) != "alice-token" {
		t.Errorf("alice's TOKEN = %q %v %v", v, ok, err)
	}
	if _, ok, _ := s.PrincipalSecrets("bob", "app").Get("TOKEN"); ok {
		t.Error("bob reads alice's secret")
	}
	if _, ok, _ := s.Secrets("app").Get("TOKEN"); ok {
		t.Error("alice's secret shows as the capsule-wide one")
	}
	// Sealed for alice/app: moved under bob's name it does not open.
	raw, _, err := s.PrincipalSecrets("alice", "app").ns.get("TOKEN")
	must(err)
	must(s.PrincipalSecrets("bob", "app").ns.put("TOKEN", raw))
	if _, _, err := s.PrincipalSecrets("bob", "app").Get("TOKEN"); err == nil {
		t.Error("a secret moved from alice to bob opened")
	}
	for _, bad := range []string{"", "Alice!", "a/b"} {
		if err := s.SetPrincipalEnv(bad, "app", "K", false, []byte("v")); err == nil {
			t.Errorf("principal %q accepted", bad)
		}
	}

	must(s.Purge("app"))
	if got := get(s.PrincipalConfig("alice", "app"), "REGION"); got != "<unset>" {
		t.Errorf("after purge alice's REGION = %q", got)
	}
	if _, ok, _ := s.PrincipalSecrets("alice", "app").Get("TOKEN"); ok {
		t.Error("after purge alice's TOKEN is kept")
	}
	if v, ok, _ := s.PrincipalSecrets("bob", "other").Get("TOKEN"); !ok || string(v) != "bob-token" {
		t.Error("purging app took another capsule's value along")
	}
}
