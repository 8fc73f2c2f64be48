package store

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A write the caller saw succeed survives kill -9: a child process writes
// keys from several goroutines and prints each key once its Set returned;
// the test kills it mid-stream, reopens the file and finds every key the
// child reported.
func TestAcknowledgedWritesSurviveKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=write", helperPathEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	const killAfter = 300
	var acked []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "w") {
			t.Fatalf("writer: %s", line)
		}
		acked = append(acked, line)
		if len(acked) == killAfter {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Keys printed before the kill landed but not yet read are in acked
	// too: the scan reads the pipe to its end.
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("writer ended with %v, not by SIGKILL; it wrote %d keys", err, len(acked))
	}
	if len(acked) < killAfter {
		t.Fatalf("writer reported %d keys before it died, want at least %d", len(acked), killAfter)
	}

	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kv := s.KV("default", "writer")
	var lost []string
	for _, key := range acked {
		v, ok, err := kv.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		if !ok || string(v) != "v-"+key {
			lost = append(lost, key)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged writes lost after kill -9, e.g. %q", len(lost), len(acked), lost[:min(5, len(lost))])
	}
	t.Logf("%d acknowledged writes, all found after kill -9", len(acked))
}
