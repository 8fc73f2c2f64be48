package store

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

// TestVolatileKeysNeverReachTheFile writes durable and volatile keys with
// distinctive values, closes the Store, and finds the durable ones after
// reopening and no trace of the volatile ones, neither through the Store
// nor anywhere in the file's bytes.
func TestVolatileKeysNeverReachTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kv := s.KV("alice", "router")
	mustSet(t, kv, "durable", "durable-value-5f1c")
	mustSet(t, kv, "~pending/call-1", "volatile-value-9b2e")
	mustSet(t, kv, "~", "volatile-value-tilde-only")
	// Config has no volatile keys: '~' is an ordinary byte there.
	mustSet(t, s.Config("router"), "~CONFIG", "config-value-77aa")
	if v, ok, err := kv.Get("~pending/call-1"); err != nil || !ok || string(v) != "volatile-value-9b2e" {
		t.Fatalf("Get of a volatile key before Close: %q, %v, %v", v, ok, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"volatile-value", "~pending/call-1"} {
		if bytes.Contains(raw, []byte(marker)) {
			t.Errorf("state.db contains %q", marker)
		}
	}
	if !bytes.Contains(raw, []byte("durable-value-5f1c")) {
		t.Error("state.db lacks the durable value (the byte check above proves nothing)")
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kv = s.KV("alice", "router")
	if v, ok, err := kv.Get("durable"); err != nil || !ok || string(v) != "durable-value-5f1c" {
		t.Errorf("durable key after reopen: %q, %v, %v", v, ok, err)
	}
	for _, key := range []string{"~pending/call-1", "~"} {
		if _, ok, err := kv.Get(key); ok || err != nil {
			t.Errorf("volatile key %q after reopen: ok=%v err=%v; want gone", key, ok, err)
		}
	}
	if keys, err := kv.List(""); err != nil || !slices.Equal(keys, []string{"durable"}) {
		t.Errorf("List after reopen = %q, %v; want only the durable key", keys, err)
	}
	if v, ok, err := s.Config("router").Get("~CONFIG"); err != nil || !ok || string(v) != "config-value-77aa" {
		t.Errorf("config key ~CONFIG after reopen: %q, %v, %v; config keys are all durable", v, ok, err)
	}
}

func TestVolatileGetSetDelete(t *testing.T) {
	kv := openTemp(t).KV("default", "fs")
	mustSet(t, kv, "~k", "volatile")
	mustSet(t, kv, "k", "durable")
	mustSet(t, kv, "~empty", "")
	for key, want := range map[string]string{"~k": "volatile", "k": "durable", "~empty": ""} {
		if v, ok, err := kv.Get(key); err != nil || !ok || string(v) != want {
			t.Errorf("Get(%q) = %q, %v, %v; want %q", key, v, ok, err, want)
		}
	}
	mustSet(t, kv, "~k", "again")
	if v, _, _ := kv.Get("~k"); string(v) != "again" {
		t.Errorf("Get after overwrite = %q", v)
	}
	if err := kv.Delete("~k"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := kv.Get("~k"); ok {
		t.Error("volatile key still there after Delete")
	}
	if v, ok, _ := kv.Get("k"); !ok || string(v) != "durable" {
		t.Errorf("deleting ~k touched k: %q, %v", v, ok)
	}
	if err := kv.Delete("~never"); err != nil {
		t.Errorf("Delete of a missing volatile key: %v", err)
	}

	// Values are copied both ways.
	buf := []byte("value")
	if err := kv.Set("~copy", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXX")
	v, _, _ := kv.Get("~copy")
	copy(v, "YYYYY")
	if again, _, _ := kv.Get("~copy"); string(again) != "value" {
		t.Errorf("a caller's buffer changed the stored value: %q", again)
	}
}

// Volatile keys obey the same key and value rules as durable ones.
func TestVolatileKeyAndValueLimits(t *testing.T) {
	kv := openTemp(t).KV("default", "fs")
	for _, tc := range []struct {
		name  string
		key   string
		value []byte
		ok    bool
	}{
		{"tilde alone", "~", nil, true},
		{"key at limit", "~" + strings.Repeat("k", MaxKeyBytes-1), []byte("v"), true},
		{"key over limit", "~" + strings.Repeat("k", MaxKeyBytes), []byte("v"), false},
		{"NUL in key", "~a\x00b", []byte("v"), false},
		{"invalid UTF-8", "~a\xff", []byte("v"), false},
		{"value at limit", "~big", make([]byte, MaxValueBytes), true},
		{"value over limit", "~bigger", make([]byte, MaxValueBytes+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := kv.Set(tc.key, tc.value)
			if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, ErrInvalid)) {
				t.Fatalf("Set: err = %v, want ok=%v or ErrInvalid", err, tc.ok)
			}
			_, found, _ := kv.Get(tc.key)
			if found != tc.ok {
				t.Fatalf("Get after Set: found=%v, want %v", found, tc.ok)
			}
		})
	}
	if _, err := kv.List("~\x00"); !errors.Is(err, ErrInvalid) {
		t.Errorf("List with a NUL volatile prefix: err = %v, want ErrInvalid", err)
	}
	bad := openTemp(t).KV("bob/fs", "fs")
	if err := bad.Set("~k", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("volatile Set with a bad principal: err = %v, want ErrInvalid", err)
	}
}

func TestVolatileListAndClearPrefix(t *testing.T) {
	durable := []string{"a", "pending/1", "zz", "\x7fdel", "émoji"}
	volatile := []string{"~", "~pending/1", "~pending/2", "~x"}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"a", "pending/1", "zz", "~", "~pending/1", "~pending/2", "~x", "\x7fdel", "émoji"}},
		{"~", []string{"~", "~pending/1", "~pending/2", "~x"}},
		{"~pending/", []string{"~pending/1", "~pending/2"}},
		{"~pending/2", []string{"~pending/2"}},
		{"pending/", []string{"pending/1"}},
		{"é", []string{"émoji"}},
		{"~nothing", nil},
	}
	for _, tc := range tests {
		t.Run("prefix="+tc.prefix, func(t *testing.T) {
			s := openTemp(t)
			kv := s.KV("default", "router")
			for _, k := range append(slices.Clone(durable), volatile...) {
				mustSet(t, kv, k, "v")
			}
			neighbour := s.KV("default", "web")
			mustSet(t, neighbour, "~pending/1", "v")

			checkListAndClear(t, kv, tc.prefix, tc.want, len(durable)+len(volatile))
			if _, ok, _ := neighbour.Get("~pending/1"); !ok {
				t.Error("ClearPrefix reached another capsule's volatile keys")
			}
		})
	}
}

// TestVolatileNamespacesAreIsolated: the same volatile key in sibling
// namespaces holds separate values, and no crafted key reaches another.
func TestVolatileNamespacesAreIsolated(t *testing.T) {
	s := openTemp(t)
	owners := map[string]*KV{
		"alice/fs":  s.KV("alice", "fs"),
		"bob/fs":    s.KV("bob", "fs"),
		"alice/web": s.KV("alice", "web"),
	}
	for name, kv := range owners {
		mustSet(t, kv, "~token", name)
	}
	attacker := s.KV("alice", "evil")
	for _, key := range []string{"~token", "~../bob/fs/token", "~bob/fs/~token", "~alice/fs/~token", "~kv/bob/fs/~token"} {
		if v, ok, err := attacker.Get(key); ok || err != nil {
			t.Errorf("attacker Get(%q) = %q, %v, %v; want nothing", key, v, ok, err)
		}
		mustSet(t, attacker, key, "overwritten")
	}
	if n, err := attacker.ClearPrefix(""); err != nil || n != 5 {
		t.Errorf("attacker ClearPrefix = %d, %v; want its own 5 keys", n, err)
	}
	for name, kv := range owners {
		if v, ok, err := kv.Get("~token"); !ok || err != nil || string(v) != name {
			t.Errorf("%s ~token = %q, %v, %v; want %q", name, v, ok, err, name)
		}
		if keys, _ := kv.List(""); !slices.Equal(keys, []string{"~token"}) {
			t.Errorf("%s List = %q", name, keys)
		}
	}
	// A namespace emptied by Delete leaves nothing behind in memory.
	if err := owners["bob/fs"].Delete("~token"); err != nil {
		t.Fatal(err)
	}
	s.volatile.mu.Lock()
	_, kept := s.volatile.spaces[volatileID{"bob", "fs"}]
	spaces := len(s.volatile.spaces)
	s.volatile.mu.Unlock()
	if kept || spaces != 2 {
		t.Errorf("after the last key of bob/fs went: bob/fs kept=%v, %d spaces; want gone, 2", kept, spaces)
	}
}

// captureLog sends slog's default logger to a buffer for the test.
func captureLog(t *testing.T) *testutil.SyncBuffer {
	t.Helper()
	buf := &testutil.SyncBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return buf
}

func TestVolatileKeyCapEvictsTheOldest(t *testing.T) {
	logs := captureLog(t)
	s := openTemp(t)
	kv := s.KV("default", "router")
	other := s.KV("default", "web")
	mustSet(t, other, "~mine", "v")
	mustSet(t, kv, "durable", "v")
	for i := range MaxVolatileKeys {
		mustSet(t, kv, "~"+strconv.Itoa(i), "v")
	}
	if n := s.VolatileEvictions(); n != 0 {
		t.Fatalf("%d evictions at exactly the cap", n)
	}
	// Rewriting ~0 makes ~1 the least recently written.
	mustSet(t, kv, "~0", "rewritten")
	for i := range 3 {
		if err := kv.Set("~new"+strconv.Itoa(i), []byte("v")); err != nil {
			t.Fatalf("Set past the cap failed: %v", err)
		}
	}
	if n := s.VolatileEvictions(); n != 3 {
		t.Errorf("VolatileEvictions = %d, want 3", n)
	}
	for _, gone := range []string{"~1", "~2", "~3"} {
		if _, ok, _ := kv.Get(gone); ok {
			t.Errorf("%s survived; it was among the oldest", gone)
		}
	}
	for _, kept := range []string{"~0", "~4", "~new0", "~new2"} {
		if _, ok, _ := kv.Get(kept); !ok {
			t.Errorf("%s was evicted", kept)
		}
	}
	if keys, _ := kv.List("~"); len(keys) != MaxVolatileKeys {
		t.Errorf("%d volatile keys after eviction, want %d", len(keys), MaxVolatileKeys)
	}
	if _, ok, _ := kv.Get("durable"); !ok {
		t.Error("eviction touched a durable key")
	}
	if _, ok, _ := other.Get("~mine"); !ok {
		t.Error("eviction touched another namespace")
	}
	out := logs.String()
	if strings.Count(out, "volatile key evicted") != 3 || !strings.Contains(out, "over 4096 volatile keys") || !strings.Contains(out, "kv default/router") {
		t.Errorf("eviction log does not name the namespace and reason three times:\n%s", out)
	}
}

func TestVolatileByteCapEvictsTheOldest(t *testing.T) {
	logs := captureLog(t)
	s := openTemp(t)
	kv := s.KV("default", "router")
	big := make([]byte, MaxValueBytes)
	for i := range 4 { // 4 × (1 MiB + 3 bytes of key) > 4 MiB: the 4th evicts the 1st
		if err := kv.Set("~b"+strconv.Itoa(i), big); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.VolatileEvictions(); n != 1 {
		t.Errorf("VolatileEvictions = %d, want 1", n)
	}
	if keys, _ := kv.List("~"); !slices.Equal(keys, []string{"~b1", "~b2", "~b3"}) {
		t.Errorf("keys after the byte cap = %q", keys)
	}
	// Shrinking a value frees its bytes: two small keys now fit.
	mustSet(t, kv, "~b1", "small")
	mustSet(t, kv, "~s", "small")
	if n := s.VolatileEvictions(); n != 1 {
		t.Errorf("VolatileEvictions = %d after writes that fit, want 1", n)
	}
	if !strings.Contains(logs.String(), "over 4194304 bytes of volatile keys and values") {
		t.Errorf("eviction log lacks the byte reason:\n%s", logs.String())
	}
}

func TestVolatileAfterClose(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	kv := s.KV("default", "fs")
	mustSet(t, kv, "~k", "v")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kv.Get("~k"); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: %v, want ErrClosed", err)
	}
	if err := kv.Set("~k", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after Close: %v, want ErrClosed", err)
	}
	if err := kv.Delete("~k"); !errors.Is(err, ErrClosed) {
		t.Errorf("Delete after Close: %v, want ErrClosed", err)
	}
	if _, err := kv.List("~"); !errors.Is(err, ErrClosed) {
		t.Errorf("List after Close: %v, want ErrClosed", err)
	}
	if _, err := kv.ClearPrefix("~"); !errors.Is(err, ErrClosed) {
		t.Errorf("ClearPrefix after Close: %v, want ErrClosed", err)
	}
}

// TestVolatileConcurrentUse runs writers, readers, listers and clearers of
// volatile keys in several namespaces at once (run it under -race); each
// namespace ends with exactly its own keys and values.
func TestVolatileConcurrentUse(t *testing.T) {
	s := openTemp(t)
	const namespaces, keys = 4, 200
	var wg sync.WaitGroup
	errs := make(chan error, namespaces*3)
	for p := range namespaces {
		kv := s.KV("p"+strconv.Itoa(p), "router")
		own := []byte(strconv.Itoa(p))
		wg.Go(func() {
			for k := range keys {
				if err := kv.Set("~"+strconv.Itoa(k), own); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for range keys {
				names, err := kv.List("~")
				if err != nil {
					errs <- err
					return
				}
				for _, n := range names {
					if v, ok, err := kv.Get(n); err != nil || (ok && !bytes.Equal(v, own)) {
						errs <- errors.New("namespace " + string(own) + " read " + n + " = " + string(v))
						return
					}
				}
			}
		})
		wg.Go(func() {
			for k := range keys {
				if err := kv.Set("~scratch/"+strconv.Itoa(k), own); err != nil {
					errs <- err
					return
				}
				if _, err := kv.ClearPrefix("~scratch/"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for p := range namespaces {
		names, err := s.KV("p"+strconv.Itoa(p), "router").List("")
		if err != nil || len(names) != keys {
			t.Errorf("namespace %d has %d keys, %v; want %d", p, len(names), err, keys)
		}
	}
}
