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

func TestOpenTwiceInProcessIsInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	_, err = Open(path, Options{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: err = %v, want ErrInUse", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
	if runtime.GOOS == "linux" && !strings.Contains(err.Error(), fmt.Sprintf("this process (pid %d)", os.Getpid())) {
		t.Errorf("error %q does not say this process holds it", err)
	}

	// Once the holder closes, the file opens again.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	_ = s2.Close()
}

func TestOpenHeldByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	run := func() (string, int) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+path)
		out, err := cmd.Output()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("helper: %v", err)
		}
		return strings.TrimSpace(string(out)), cmd.ProcessState.ExitCode()
	}

	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, code := run()
	if code != 3 {
		t.Fatalf("second process while held: exit %d, output %q; want in-use (3)", code, out)
	}
	if runtime.GOOS == "linux" && !strings.Contains(out, fmt.Sprintf("held by process %d", os.Getpid())) {
		t.Errorf("second process's error %q does not name the holder pid %d", out, os.Getpid())
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if out, code := run(); code != 0 {
		t.Fatalf("second process after Close: exit %d, output %q; want opened", code, out)
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
