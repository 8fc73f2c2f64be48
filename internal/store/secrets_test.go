package store

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestSecretsRoundTrip(t *testing.T) {
	s := openTemp(t)
	sec := s.Secrets("openai")
	if _, ok, err := sec.Get("API_KEY"); ok || err != nil {
		t.Fatalf("Get before Set: ok=%v err=%v", ok, err)
	}
	for _, k := range []string{"API_KEY", "ORG", "A"} {
		if err := sec.Set(k, []byte("value-of-"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, err := sec.Get("ORG"); string(v) != "value-of-ORG" || !ok || err != nil {
		t.Fatalf("Get = %q, %v, %v", v, ok, err)
	}
	if keys, err := sec.List(); err != nil || !slices.Equal(keys, []string{"A", "API_KEY", "ORG"}) {
		t.Fatalf("List = %q, %v", keys, err)
	}
	if err := sec.Delete("ORG"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := sec.Get("ORG"); ok {
		t.Fatal("secret still there after Delete")
	}
	if _, ok, _ := s.Secrets("anthropic").Get("API_KEY"); ok {
		t.Fatal("another capsule sees openai's secret")
	}
}

func TestSecretValueRules(t *testing.T) {
	sec := openTemp(t).Secrets("openai")
	tests := []struct {
		name    string
		key     string
		value   []byte
		wantErr string
	}{
		{"empty value", "K", nil, "must not be empty"},
		{"too large", "K", make([]byte, MaxSecretValueBytes+1), "over the 65536-byte limit"},
		{"NUL key", "K\x00", []byte("v"), "contains NUL"},
		{"empty key", "", []byte("v"), "must not be empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := sec.Set(tc.key, tc.value)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Set: err = %v, want ErrInvalid mentioning %q", err, tc.wantErr)
			}
		})
	}
	if err := sec.Set("K", make([]byte, MaxSecretValueBytes)); err != nil {
		t.Fatalf("Set at the limit: %v", err)
	}
}

func TestSecretPlaintextNotOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const plain = "sk-PLAINTEXT-MARKER-0123456789"
	const control = "KV-PLAINTEXT-MARKER-0123456789"
	if err := s.Secrets("openai").Set("API_KEY", []byte(plain)); err != nil {
		t.Fatal(err)
	}
	// A plain KV value is on disk as is: proves the raw read can find one.
	mustSet(t, s.KV("default", "fs"), "k", control)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(control)) {
		t.Fatal("control value not found in the raw file; the check below would prove nothing")
	}
	if bytes.Contains(raw, []byte(plain)) {
		t.Fatal("secret plaintext found in the raw database file")
	}
}

// rawUpdate edits the bbolt file under the store, as someone holding a copy
// of the database could.
func rawUpdate(t *testing.T, s *Store, fn func(secrets *bolt.Bucket) error) {
	t.Helper()
	err := s.update(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucketSecrets)) })
	if err != nil {
		t.Fatal(err)
	}
}

func TestSealedSecretsResistTampering(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(secrets *bolt.Bucket) error
		// read is the secret the test then tries to open.
		capsule, key string
	}{
		{
			name: "flipped ciphertext byte",
			tamper: func(b *bolt.Bucket) error {
				v := slices.Clone(b.Bucket([]byte("openai")).Get([]byte("API_KEY")))
				v[len(v)-1] ^= 1
				return b.Bucket([]byte("openai")).Put([]byte("API_KEY"), v)
			},
			capsule: "openai", key: "API_KEY",
		},
		{
			name: "flipped nonce byte",
			tamper: func(b *bolt.Bucket) error {
				v := slices.Clone(b.Bucket([]byte("openai")).Get([]byte("API_KEY")))
				v[1] ^= 1
				return b.Bucket([]byte("openai")).Put([]byte("API_KEY"), v)
			},
			capsule: "openai", key: "API_KEY",
		},
		{
			name: "truncated",
			tamper: func(b *bolt.Bucket) error {
				return b.Bucket([]byte("openai")).Put([]byte("API_KEY"), []byte{sealFormat, 1, 2, 3})
			},
			capsule: "openai", key: "API_KEY",
		},
		{
			name: "value moved to another key",
			tamper: func(b *bolt.Bucket) error {
				v := slices.Clone(b.Bucket([]byte("openai")).Get([]byte("API_KEY")))
				return b.Bucket([]byte("openai")).Put([]byte("OTHER"), v)
			},
			capsule: "openai", key: "OTHER",
		},
		{
			name: "two keys swapped",
			tamper: func(b *bolt.Bucket) error {
				o := b.Bucket([]byte("openai"))
				v1, v2 := slices.Clone(o.Get([]byte("API_KEY"))), slices.Clone(o.Get([]byte("ORG")))
				if err := o.Put([]byte("API_KEY"), v2); err != nil {
					return err
				}
				return o.Put([]byte("ORG"), v1)
			},
			capsule: "openai", key: "ORG",
		},
		{
			name: "value moved to another capsule",
			tamper: func(b *bolt.Bucket) error {
				v := slices.Clone(b.Bucket([]byte("openai")).Get([]byte("API_KEY")))
				dst, err := b.CreateBucketIfNotExists([]byte("evil"))
				if err != nil {
					return err
				}
				return dst.Put([]byte("API_KEY"), v)
			},
			capsule: "evil", key: "API_KEY",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t)
			for _, k := range []string{"API_KEY", "ORG"} {
				if err := s.Secrets("openai").Set(k, []byte("secret-"+k)); err != nil {
					t.Fatal(err)
				}
			}
			rawUpdate(t, s, tc.tamper)
			v, ok, err := s.Secrets(tc.capsule).Get(tc.key)
			if !errors.Is(err, ErrUnseal) || ok || v != nil {
				t.Fatalf("Get(%s, %s) = %q, %v, %v; want ErrUnseal", tc.capsule, tc.key, v, ok, err)
			}
		})
	}
}

func TestSecretsUnderAnotherKeyFileFail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Secrets("openai").Set("API_KEY", []byte("sk-1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	other := filepath.Join(dir, "other.key")
	writeKeyFile(t, other, 0o600, 32)
	s, err = Open(path, Options{KeyFile: other})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Secrets("openai").Get("API_KEY"); !errors.Is(err, ErrUnseal) || !strings.Contains(err.Error(), other) {
		t.Fatalf("Get under another key: err = %v, want ErrUnseal naming %s", err, other)
	}
}

func writeKeyFile(t *testing.T, path string, mode os.FileMode, size int) {
	t.Helper()
	b := make([]byte, size)
	_, _ = rand.Read(b)
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by umask
		t.Fatal(err)
	}
}

func TestKeyFileCreatedPrivateOnFirstUse(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "state.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keyPath := filepath.Join(dir, "secrets.key")
	if _, err := os.Stat(keyPath); !os.IsNotExist(err) {
		t.Fatalf("key file exists before any secret was used: %v", err)
	}
	if err := s.Secrets("x").Set("K", []byte("v")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("key file mode %04o size %d; want 0600, 32", fi.Mode().Perm(), fi.Size())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".secrets-key-") {
			t.Errorf("temporary key file %s left behind", e.Name())
		}
	}
}

func TestKeyFileChecks(t *testing.T) {
	tests := []struct {
		name    string
		mode    os.FileMode
		size    int
		wantErr string
	}{
		{"group readable", 0o640, 32, "has mode 0640"},
		{"world readable", 0o604, 32, "has mode 0604"},
		{"group writable", 0o620, 32, "has mode 0620"},
		{"too short", 0o600, 16, "is 16 bytes, want 32"},
		{"too long", 0o600, 33, "is 33 bytes, want 32"},
		{"empty", 0o600, 0, "is 0 bytes, want 32"},
		{"owner read-only is fine", 0o400, 32, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			keyPath := filepath.Join(dir, "k")
			writeKeyFile(t, keyPath, tc.mode, tc.size)
			s, err := Open(filepath.Join(dir, "state.db"), Options{KeyFile: keyPath})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = s.Secrets("x").Set("K", []byte("v"))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Set: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrKeyFile) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), keyPath) {
				t.Fatalf("Set: err = %v, want ErrKeyFile naming %s and %q", err, keyPath, tc.wantErr)
			}
			// Fixing the file works without reopening the store.
			writeKeyFile(t, keyPath, 0o600, 32)
			if err := s.Secrets("x").Set("K", []byte("v")); err != nil {
				t.Fatalf("Set after fixing the key file: %v", err)
			}
		})
	}
}

func TestKeyFileIsADirectory(t *testing.T) {
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "k")
	if err := os.Mkdir(keyPath, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := Open(filepath.Join(dir, "state.db"), Options{KeyFile: keyPath})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Secrets("x").Get("K"); err != nil {
		t.Fatalf("Get of a missing secret should not need the key: %v", err)
	}
	if err := s.Secrets("x").Set("K", []byte("v")); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("Set: err = %v, want ErrKeyFile", err)
	}
}

// TestMCPTokensApart: a capsule's MCP tokens are sealed apart from its
// secrets (which the capsule reads), and Purge forgets both.
func TestMCPTokensApart(t *testing.T) {
	s := openTemp(t)
	if err := s.MCPTokens("gh").Set("srv", []byte("tok")); err != nil {
		t.Fatal(err)
	}
	if keys, err := s.Secrets("gh").List(); err != nil || len(keys) != 0 {
		t.Fatalf("the capsule's secrets list %v, %v; want none", keys, err)
	}
	if v, ok, err := s.MCPTokens("gh").Get("srv"); err != nil || !ok || string(v) != "tok" {
		t.Fatalf("Get = %q, %v, %v", v, ok, err)
	}
	if err := s.Purge("gh"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.MCPTokens("gh").Get("srv"); err != nil || ok {
		t.Fatalf("after Purge: found %v, %v", ok, err)
	}
}
