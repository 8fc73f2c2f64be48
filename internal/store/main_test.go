package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv, when set to a database path, turns the test binary into a
// second process that tries to open that database and reports the outcome
// on stdout (TestOpenHeldByAnotherProcess).
const helperEnv = "ASTRID_STORE_TEST_OPEN"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		os.Exit(helperOpen(path))
	}
	goleak.VerifyTestMain(m)
}

func helperOpen(path string) int {
	s, err := Open(path, Options{Timeout: 100 * time.Millisecond})
	if err == nil {
		_ = s.Close()
		fmt.Println("opened")
		return 0
	}
	if errors.Is(err, ErrInUse) {
		fmt.Println("in use:", err)
		return 3
	}
	fmt.Println("other error:", err)
	return 4
}

// openTemp opens a fresh store in a test directory and closes it at cleanup.
func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "state.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mustSet(t *testing.T, kv *KV, key, value string) {
	t.Helper()
	if err := kv.Set(key, []byte(value)); err != nil {
		t.Fatal(err)
	}
}
