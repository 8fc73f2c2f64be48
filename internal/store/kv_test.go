package store

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEverythingSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, s.KV("alice", "fs"), "a", "1")
	mustSet(t, s.KV("alice", "fs"), "empty", "")
	mustSet(t, s.KV("bob", "fs"), "a", "2")
	mustSet(t, s.Config("openai"), "BASE_URL", "http://127.0.0.1:11434")
	if err := s.Secrets("openai").Set("API_KEY", []byte("sk-test")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		name string
		get  func() ([]byte, bool, error)
		want string
	}{
		{"kv alice", func() ([]byte, bool, error) { return s.KV("alice", "fs").Get("a") }, "1"},
		{"kv alice empty value", func() ([]byte, bool, error) { return s.KV("alice", "fs").Get("empty") }, ""},
		{"kv bob", func() ([]byte, bool, error) { return s.KV("bob", "fs").Get("a") }, "2"},
		{"config", func() ([]byte, bool, error) { return s.Config("openai").Get("BASE_URL") }, "http://127.0.0.1:11434"},
		{"secret", func() ([]byte, bool, error) { return s.Secrets("openai").Get("API_KEY") }, "sk-test"},
	} {
		got, ok, err := tc.get()
		if err != nil || !ok || string(got) != tc.want {
			t.Errorf("%s after reopen: %q, %v, %v; want %q, true, nil", tc.name, got, ok, err, tc.want)
		}
	}
}

func TestKVGetSetDelete(t *testing.T) {
	kv := openTemp(t).KV("default", "fs")
	if _, ok, err := kv.Get("k"); ok || err != nil {
		t.Fatalf("Get of a never-set key: ok=%v err=%v", ok, err)
	}
	mustSet(t, kv, "k", "v1")
	mustSet(t, kv, "k", "v2")
	if v, ok, err := kv.Get("k"); string(v) != "v2" || !ok || err != nil {
		t.Fatalf("Get after overwrite = %q, %v, %v", v, ok, err)
	}
	if err := kv.Delete("k"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := kv.Get("k"); ok {
		t.Fatal("key still there after Delete")
	}
	if err := kv.Delete("k"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
}

func TestKVGetReturnsACopy(t *testing.T) {
	kv := openTemp(t).KV("default", "fs")
	mustSet(t, kv, "k", "value")
	v, _, _ := kv.Get("k")
	copy(v, "XXXXX")
	if again, _, _ := kv.Get("k"); string(again) != "value" {
		t.Fatalf("mutating a returned value changed the store: %q", again)
	}
}

func TestKVListAndClearPrefix(t *testing.T) {
	keys := []string{"session/2", "session/1", "sessions", "sess", "other", "émoji", "session/10"}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"other", "sess", "session/1", "session/10", "session/2", "sessions", "émoji"}},
		{"session/", []string{"session/1", "session/10", "session/2"}},
		{"sess", []string{"sess", "session/1", "session/10", "session/2", "sessions"}},
		{"session/1", []string{"session/1", "session/10"}},
		{"é", []string{"émoji"}},
		{"zzz", nil},
	}
	for _, tc := range tests {
		t.Run("prefix="+tc.prefix, func(t *testing.T) {
			s := openTemp(t)
			kv := s.KV("default", "fs")
			for _, k := range keys {
				mustSet(t, kv, k, "v")
			}
			neighbour := s.KV("default", "web")
			mustSet(t, neighbour, "session/1", "v")

			checkListAndClear(t, kv, tc.prefix, tc.want, len(keys))
			if _, ok, _ := neighbour.Get("session/1"); !ok {
				t.Error("ClearPrefix reached another capsule's namespace")
			}
		})
	}
}

// checkListAndClear checks that List(prefix) is want, that ClearPrefix(prefix)
// deletes exactly those keys, and that the rest of the namespace's total
// keys are left.
func checkListAndClear(t *testing.T, kv *KV, prefix string, want []string, total int) {
	t.Helper()
	got, err := kv.List(prefix)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("List(%q) = %q, %v; want %q", prefix, got, err, want)
	}
	n, err := kv.ClearPrefix(prefix)
	if err != nil || n != len(want) {
		t.Fatalf("ClearPrefix(%q) = %d, %v; want %d", prefix, n, err, len(want))
	}
	left, _ := kv.List("")
	for _, k := range left {
		if strings.HasPrefix(k, prefix) {
			t.Errorf("ClearPrefix(%q) left %q", prefix, k)
		}
	}
	if len(left)+n != total {
		t.Errorf("ClearPrefix(%q) removed %d, %d left, of %d keys", prefix, n, len(left), total)
	}
	for _, k := range want {
		if _, ok, _ := kv.Get(k); ok {
			t.Errorf("%q still readable after ClearPrefix(%q)", k, prefix)
		}
	}
}

func TestKVOnEmptyNamespace(t *testing.T) {
	kv := openTemp(t).KV("nobody", "nothing")
	if keys, err := kv.List(""); err != nil || len(keys) != 0 {
		t.Fatalf("List on a fresh namespace = %q, %v", keys, err)
	}
	if n, err := kv.ClearPrefix(""); err != nil || n != 0 {
		t.Fatalf("ClearPrefix on a fresh namespace = %d, %v", n, err)
	}
}

// TestNamespacesAreIsolated plays an attacker capsule (alice's "evil")
// trying to reach bob's "fs" values through crafted keys and prefixes.
func TestNamespacesAreIsolated(t *testing.T) {
	s := openTemp(t)
	victim := s.KV("bob", "fs")
	const secret = "bob-fs-secret"
	mustSet(t, victim, "token", secret)
	mustSet(t, s.Config("fs"), "token", secret)
	mustSet(t, s.KV("alice", "fs"), "token", secret) // same capsule, other principal

	attacker := s.KV("alice", "evil")
	crafted := []string{
		"token",
		"../bob/fs/token",
		"../../kv/bob/fs/token",
		"bob/fs/token",
		"bob:capsule:fs:token",
		"bob:fs:token",
		"kv/bob/fs/token",
		"/token",
		"fs/token",
		"bob\x00fs\x00token",
		"\x00token",
		"bob\x00capsule\x00fs\x00token",
	}
	for _, key := range crafted {
		t.Run(strings.ReplaceAll(key, "\x00", `\0`), func(t *testing.T) {
			v, ok, err := attacker.Get(key)
			if bytes.Contains(v, []byte(secret)) {
				t.Fatalf("Get(%q) returned another namespace's value", key)
			}
			if ok {
				t.Fatalf("Get(%q) found a key the attacker never set", key)
			}
			if strings.Contains(key, "\x00") && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Get(%q): err = %v, want ErrInvalid for a NUL key", key, err)
			}
			// Writing through the crafted key must stay in the attacker's namespace.
			if err := attacker.Set(key, []byte("overwritten")); err == nil {
				if v, _, _ := victim.Get("token"); string(v) != secret {
					t.Fatalf("Set(%q) changed bob's value to %q", key, v)
				}
			}
		})
	}
	for _, prefix := range []string{"", "t", "bob", "../", "fs"} {
		keys, err := attacker.List(prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if v, _, _ := attacker.Get(k); string(v) != "overwritten" {
				t.Errorf("List(%q) shows %q, which the attacker did not write", prefix, k)
			}
		}
	}
	if _, err := attacker.ClearPrefix(""); err != nil {
		t.Fatal(err)
	}
	for name, kv := range map[string]*KV{"bob/fs": victim, "config fs": s.Config("fs"), "alice/fs": s.KV("alice", "fs")} {
		if v, ok, err := kv.Get("token"); !ok || string(v) != secret || err != nil {
			t.Errorf("%s after the attack: %q, %v, %v", name, v, ok, err)
		}
	}
}

func TestBadIDsNeverReachAStore(t *testing.T) {
	s := openTemp(t)
	mustSet(t, s.KV("bob", "fs"), "token", "x")
	tests := []struct {
		name      string
		principal string
		capsule   string
	}{
		{"empty principal", "", "fs"},
		{"principal with slash", "bob/fs", "fs"},
		{"principal with dots", "..", "fs"},
		{"principal with NUL", "bob\x00", "fs"},
		{"principal with colon", "bob:capsule", "fs"},
		{"principal too long", strings.Repeat("a", 65), "fs"},
		{"principal non-ASCII", "bób", "fs"},
		{"empty capsule", "bob", ""},
		{"capsule uppercase", "bob", "FS"},
		{"capsule underscore", "bob", "my_tool"},
		{"capsule path", "bob", "fs/../web"},
		{"capsule dot", "bob", "fs.x"},
		{"capsule scoped", "bob", "@scope/fs"},
		{"capsule NUL", "bob", "fs\x00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv := s.KV(tc.principal, tc.capsule)
			if _, _, err := kv.Get("token"); !errors.Is(err, ErrInvalid) {
				t.Errorf("Get: err = %v, want ErrInvalid", err)
			}
			if err := kv.Set("token", nil); !errors.Is(err, ErrInvalid) {
				t.Errorf("Set: err = %v, want ErrInvalid", err)
			}
			if err := kv.Delete("token"); !errors.Is(err, ErrInvalid) {
				t.Errorf("Delete: err = %v, want ErrInvalid", err)
			}
			if _, err := kv.List(""); !errors.Is(err, ErrInvalid) {
				t.Errorf("List: err = %v, want ErrInvalid", err)
			}
			if _, err := kv.ClearPrefix(""); !errors.Is(err, ErrInvalid) {
				t.Errorf("ClearPrefix: err = %v, want ErrInvalid", err)
			}
			if tc.principal == "bob" {
				if err := s.Config(tc.capsule).Set("k", nil); !errors.Is(err, ErrInvalid) {
					t.Errorf("Config.Set: err = %v, want ErrInvalid", err)
				}
				if err := s.Secrets(tc.capsule).Set("k", []byte("v")); !errors.Is(err, ErrInvalid) {
					t.Errorf("Secrets.Set: err = %v, want ErrInvalid", err)
				}
			}
		})
	}
}

func TestGoodIDsAtTheLimits(t *testing.T) {
	s := openTemp(t)
	for _, tc := range []struct{ principal, capsule string }{
		{strings.Repeat("Z", 64), "a"},
		{"a_b-C9", "0-capsule--x"},
		{"-", "-"},
	} {
		if err := s.KV(tc.principal, tc.capsule).Set("k", []byte("v")); err != nil {
			t.Errorf("KV(%q, %q).Set: %v", tc.principal, tc.capsule, err)
		}
	}
}

func TestKeyAndValueLimits(t *testing.T) {
	kv := openTemp(t).KV("default", "fs")
	tests := []struct {
		name    string
		key     string
		value   []byte
		wantErr string // "" = accepted
	}{
		{"key at limit", strings.Repeat("k", MaxKeyBytes), []byte("v"), ""},
		{"key over limit", strings.Repeat("k", MaxKeyBytes+1), []byte("v"), "1025 bytes, over the 1024-byte limit"},
		{"empty key", "", []byte("v"), "must not be empty"},
		{"NUL in key", "a\x00b", []byte("v"), "contains NUL"},
		{"invalid UTF-8 key", "a\xffb", []byte("v"), "not valid UTF-8"},
		{"value at limit", "big", make([]byte, MaxValueBytes), ""},
		{"value over limit", "bigger", make([]byte, MaxValueBytes+1), "1048577 bytes, over the 1048576-byte limit"},
		{"nil value", "nil", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := kv.Set(tc.key, tc.value)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Set: %v", err)
				}
				got, ok, err := kv.Get(tc.key)
				if err != nil || !ok || !bytes.Equal(got, tc.value) {
					t.Fatalf("Get after Set: len %d, %v, %v", len(got), ok, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Set: err = %v, want ErrInvalid mentioning %q", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), "store: kv default/fs: set") {
				t.Errorf("error %q does not name the namespace and operation", err)
			}
		})
	}
	if _, err := kv.List("a\x00"); !errors.Is(err, ErrInvalid) {
		t.Errorf("List with a NUL prefix: err = %v, want ErrInvalid", err)
	}
}
