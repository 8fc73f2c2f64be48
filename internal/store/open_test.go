package store

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("database mode = %04o, want 0600", perm)
	}
}

// holdLock opens path with bbolt directly, as a process that keeps the file
// open would (an older astrid, bbolt's own CLI), and returns its closer.
func holdLock(t *testing.T, path string) func() {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("hold %s: %v", path, err)
	}
	var closed bool
	release := func() {
		if closed {
			return
		}
		closed = true
		if err := db.Close(); err != nil {
			t.Errorf("release the held lock: %v", err)
		}
	}
	t.Cleanup(release)
	return release
}

// An open Store does not hold the file: a second Store, in this process or
// another, opens it and both read each other's writes.
func TestTwoStoresShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path, Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("second Open while the first is open: %v", err)
	}
	defer b.Close()
	mustSet(t, a.KV("default", "fs"), "from-a", "1")
	mustSet(t, b.KV("default", "fs"), "from-b", "2")
	for _, s := range []*Store{a, b} {
		keys, err := s.KV("default", "fs").List("")
		if err != nil || strings.Join(keys, ",") != "from-a,from-b" {
			t.Errorf("List = %q, %v; want both stores' keys", keys, err)
		}
	}
	if out, code := runOpenHelper(t, path); code != 0 {
		t.Fatalf("another process while two Stores are open: exit %d, output %q; want opened", code, out)
	}
}

// A holder that keeps the lock past the wait makes Open and every
// operation fail with ErrInUse, saying which file, who holds it and for
// how long the call waited; once it lets go, the same Store works again.
func TestLockHeldPastTheWaitIsInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	const wait = 60 * time.Millisecond
	s, err := Open(path, Options{Timeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kv := s.KV("default", "fs")
	mustSet(t, kv, "before", "1")

	release := holdLock(t, path)
	ops := []struct {
		name string
		run  func() error
	}{
		{"Open", func() error {
			s2, err := Open(path, Options{Timeout: wait})
			if err == nil {
				_ = s2.Close()
			}
			return err
		}},
		{"Set", func() error { return kv.Set("k", []byte("v")) }},
		{"Get", func() error { _, _, err := kv.Get("before"); return err }},
		{"Delete", func() error { return kv.Delete("before") }},
		{"List", func() error { _, err := kv.List(""); return err }},
		{"ClearPrefix", func() error { _, err := kv.ClearPrefix(""); return err }},
		{"Secrets.Set", func() error { return s.Secrets("fs").Set("API_KEY", []byte("x")) }},
	}
	for _, op := range ops {
		err := op.run()
		if !errors.Is(err, ErrInUse) {
			t.Errorf("%s while held: err = %v, want ErrInUse", op.name, err)
			continue
		}
		msg := err.Error()
		for _, want := range []string{path, "for longer than " + wait.String()} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q does not contain %q", op.name, msg, want)
			}
		}
		if runtime.GOOS == "linux" && !strings.Contains(msg, fmt.Sprintf("this process (pid %d)", os.Getpid())) {
			t.Errorf("%s: error %q does not name the holder", op.name, msg)
		}
	}
	if err := kv.Set("k", []byte("v")); !strings.Contains(fmt.Sprint(err), `kv default/fs: set "k"`) {
		t.Errorf("Set error %q does not say which namespace and key", err)
	}

	release()
	mustSet(t, kv, "after", "2")
	if v, ok, err := kv.Get("before"); err != nil || !ok || string(v) != "1" {
		t.Errorf("Get(before) after release = %q, %v, %v; want the value written before", v, ok, err)
	}
}

func runOpenHelper(t *testing.T, path string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=open", helperPathEnv+"="+path)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("helper: %v", err)
	}
	return strings.TrimSpace(string(out)), cmd.ProcessState.ExitCode()
}

func TestOpenHeldByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	release := holdLock(t, path)
	out, code := runOpenHelper(t, path)
	if code != 3 {
		t.Fatalf("second process while held: exit %d, output %q; want in-use (3)", code, out)
	}
	if runtime.GOOS == "linux" && !strings.Contains(out, fmt.Sprintf("held by process %d", os.Getpid())) {
		t.Errorf("second process's error %q does not name the holder pid %d", out, os.Getpid())
	}

	release()
	if out, code := runOpenHelper(t, path); code != 0 {
		t.Fatalf("second process after release: exit %d, output %q; want opened", code, out)
	}
}

func TestUseAfterCloseIsErrClosed(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	kv := s.KV("default", "fs")
	mustSet(t, kv, "k", "v")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if err := kv.Set("k", []byte("v")); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after Close: err = %v, want ErrClosed", err)
	}
	if _, _, err := kv.Get("k"); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: err = %v, want ErrClosed", err)
	}
}

func TestOpenRefusesUnknownFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(keyFormat, []byte("99"))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), `format "99"`) {
		t.Fatalf("Open of a format-99 file: err = %v, want a format error", err)
	}
}

// A failure to release the file is not swallowed: the operation that
// committed still succeeds (its write is durable), and Close returns the
// failure.
func TestCloseReturnsReleaseErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	broken := errors.New("injected close failure")
	closeDB = func(db *bolt.DB) error {
		if err := db.Close(); err != nil {
			return err
		}
		return broken
	}
	defer func() { closeDB = (*bolt.DB).Close }()
	kv := s.KV("default", "fs")
	if err := kv.Set("k", []byte("v")); err != nil {
		t.Fatalf("Set whose commit succeeded: %v", err)
	}
	err = s.Close()
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "store: close "+path) {
		t.Fatalf("Close after a failed release = %v, want the release error naming the file", err)
	}
	closeDB = (*bolt.DB).Close
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if v, ok, err := s2.KV("default", "fs").Get("k"); err != nil || !ok || string(v) != "v" {
		t.Errorf("the write before the failed release: %q, %v, %v; want it kept", v, ok, err)
	}
}
