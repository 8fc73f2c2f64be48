package store

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv, when set, turns the test binary into a second process that
// uses the database named by helperPathEnv and reports on stdout: "open"
// tries to open it (TestOpenHeldByAnotherProcess), "write" writes keys
// until killed (TestAcknowledgedWritesSurviveKill9), "share" writes its own
// keys alongside other processes (TestManyProcessesShareOneFile).
const (
	helperEnv     = "ASTRID_STORE_TEST_HELPER"
	helperPathEnv = "ASTRID_STORE_TEST_PATH"
	helperIDEnv   = "ASTRID_STORE_TEST_ID"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Getenv(helperPathEnv), os.Getenv(helperIDEnv)))
	}
	goleak.VerifyTestMain(m)
}

func runHelper(mode, path, id string) int {
	switch mode {
	case "open":
		return helperOpen(path)
	case "write":
		return helperWrite(path)
	case "share":
		return helperShare(path, id)
	}
	fmt.Println("unknown helper mode", mode)
	return 4
}

// helperOpen exits 0 when it opened the file, 3 when it was in use.
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

// helperWrite writes keys from several goroutines (so commits are shared)
// and prints each key on its own line once its Set has returned. It runs
// until it is killed or its stdout is gone.
func helperWrite(path string) int {
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("open:", err)
		return 4
	}
	kv := s.KV("default", "writer")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("w%d-%d", g, i)
				if err := kv.Set(key, []byte("v-"+key)); err != nil {
					fmt.Println("set:", err)
					os.Exit(4)
				}
				// One Write per line: lines from the goroutines never mix.
				if _, err := os.Stdout.WriteString(key + "\n"); err != nil {
					os.Exit(0)
				}
			}
		})
	}
	wg.Wait()
	return 0
}

// sharedKeys is how many keys each "share" helper writes.
const sharedKeys = 40

// helperShare opens the file, says "ready", waits for a line on stdin (so
// every helper has the Store open before any writes), then writes and
// reads back its own keys.
func helperShare(path, id string) int {
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("open:", err)
		return 4
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Println("stdin:", err)
		return 4
	}
	kv := s.KV("p"+id, "shared")
	for i := range sharedKeys {
		key := strconv.Itoa(i)
		if err := kv.Set(key, []byte(id)); err != nil {
			fmt.Println("set:", err)
			return 4
		}
		if v, ok, err := kv.Get(key); err != nil || !ok || string(v) != id {
			fmt.Printf("get %s: %q %v %v\n", key, v, ok, err)
			return 4
		}
	}
	if err := s.Close(); err != nil {
		fmt.Println("close:", err)
		return 4
	}
	fmt.Println("done")
	return 0
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
