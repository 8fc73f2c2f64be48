package store

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Several processes with the same database open at the same time all
// succeed: each has the Store open before any of them writes (a barrier on
// stdin), then each writes and reads back its own keys while the others do.
func TestManyProcessesShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	const procs = 4
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
	}
	children := make([]child, procs)
	for i := range children {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=share", helperPathEnv+"="+path, helperIDEnv+"="+strconv.Itoa(i))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		children[i] = child{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	}
	for i, c := range children {
		if !c.out.Scan() || c.out.Text() != "ready" {
			t.Fatalf("process %d did not open the database alongside the others: %q", i, c.out.Text())
		}
	}
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range children {
		var lines []string
		for c.out.Scan() {
			lines = append(lines, c.out.Text())
		}
		if err := c.cmd.Wait(); err != nil || strings.Join(lines, "\n") != "done" {
			t.Errorf("process %d: %v, output %q", i, err, lines)
		}
	}

	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range procs {
		keys, err := s.KV("p"+strconv.Itoa(i), "shared").List("")
		if err != nil || len(keys) != sharedKeys {
			t.Errorf("process %d's namespace has %d keys, %v; want %d", i, len(keys), err, sharedKeys)
		}
	}
}

// A Store kept busy without a pause does not shut another one out: it gives
// up the file after its tenure, and the other gets a turn well within its
// wait. Two Stores on one file stand for two processes (flock treats two
// opens in one process as two holders).
func TestBusyStoreGivesOthersATurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	busy, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// The other's wait is far beyond a tenure; without tenures the busy
	// Store would keep the file until the test ends.
	other, err := Open(path, Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	stop := make(chan struct{})
	busyErr := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		kv := busy.KV("default", "busy")
		for i := 0; ; i++ {
			if i == 3 {
				close(started)
			}
			select {
			case <-stop:
				busyErr <- nil
				return
			default:
			}
			if err := kv.Set(strconv.Itoa(i%64), []byte("x")); err != nil {
				busyErr <- err
				return
			}
		}
	}()
	<-started // the busy Store has the file
	kv := other.KV("default", "other")
	for i := range 5 {
		if err := kv.Set(strconv.Itoa(i), []byte("y")); err != nil {
			close(stop)
			<-busyErr
			t.Fatalf("write %d beside a busy Store: %v", i, err)
		}
	}
	close(stop)
	if err := <-busyErr; err != nil {
		t.Fatalf("the busy Store: %v", err)
	}
}
