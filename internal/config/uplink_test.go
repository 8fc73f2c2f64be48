package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestUplinkPrincipals(t *testing.T) {
	got, err := Uplink{Principals: []string{"1001=alice", " 1002 = bob "}}.UIDPrincipals()
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]string{1001: "alice", 1002: "bob"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("UIDPrincipals = %v, want %v", got, want)
	}
	for _, bad := range []string{"alice", "x=alice", "-1=alice", "1001=", "1001=al ice", "1001=../root", "1001=" + strings.Repeat("a", 65)} {
		if _, err := (Uplink{Principals: []string{bad}}).UIDPrincipals(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// One uid listed twice may act as both; the first is its default.
	u := Uplink{Principals: []string{"1=a", "1=b", "1=a", "2=c"}}
	if got, err := u.UIDPrincipals(); err != nil || got[1] != "a" || got[2] != "c" {
		t.Errorf("defaults of a uid listed twice: %v %v", got, err)
	}
	if got, err := u.UIDAllowedPrincipals(); err != nil || !reflect.DeepEqual(got, map[int][]string{1: {"a", "b"}, 2: {"c"}}) {
		t.Errorf("allowed: %v %v", got, err)
	}
}

func TestUplinkValidation(t *testing.T) {
	for _, tc := range []struct{ body, key string }{
		{"[uplink]\nmax_clients = 0\n", "uplink.max_clients"},
		{"[uplink]\nmax_clients = 1001\n", "uplink.max_clients"},
		{"[uplink]\nclient_queue = 0\n", "uplink.client_queue"},
		{"[uplink]\nprincipals = [\"root\"]\n", "uplink.principals"},
		{"[uplink]\ningress = [\"guest=user..prompt\"]\n", "uplink.ingress"},
	} {
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%q: err = %v, want one naming %s", tc.body, err, tc.key)
		}
	}
}
