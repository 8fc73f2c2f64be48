//go:build unix

package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

// writeFixture is a capsule with home:// granted and principal erin's home.
type writeFixture struct {
	call *Call
	home string
}

func newWriteFixture(t *testing.T) writeFixture {
	t.Helper()
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	home := filepath.Join(f.homes, "erin")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	call, _ := c.Begin(context.Background(), "erin")
	t.Cleanup(call.End)
	return writeFixture{call: call, home: home}
}

// noTempFiles fails the test if a temporary file of a replacement is left
// in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".astrid-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// uniform reports whether data is n copies of one byte.
func uniform(data []byte, n int) bool {
	return len(data) == n && bytes.Count(data, data[:1]) == n
}

// A reader polling the file while it is rewritten again and again sees one
// whole version each time, never an empty or partial file (today's truncate
// and write in place shows both).
func TestReaderNeverSeesAPartialFile(t *testing.T) {
	w := newWriteFixture(t)
	const size = 4 << 20
	versions := [][]byte{bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'b'}, size)}
	if err := w.call.FSWrite("home://big", versions[0]); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var reads atomic.Int64
	var bad atomic.Value
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			data, err := os.ReadFile(filepath.Join(w.home, "big"))
			reads.Add(1)
			if err != nil || !uniform(data, size) {
				bad.Store(fmt.Sprintf("read %d bytes (err %v)", len(data), err))
				return
			}
		}
	})
	// Keep writing until the reader has overlapped many writes.
	for i := 1; i <= 40 || reads.Load() < 20; i++ {
		if err := w.call.FSWrite("home://big", versions[i%2]); err != nil {
			t.Fatal(err)
		}
		if bad.Load() != nil || i > 10000 {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if msg := bad.Load(); msg != nil {
		t.Fatalf("a reader saw a partial file: %v", msg)
	}
	noTempFiles(t, w.home)
}

// childCall is the call of a re-executed test binary: erin's, with the
// homes under homes, so that the parent sees the files.
func childCall(t *testing.T, homes string) *Call {
	t.Helper()
	f := newFixture(t)
	f.deps.HomesDir = homes
	c := f.capsule(t, homeCapsule)
	call, _ := c.Begin(context.Background(), "erin")
	t.Cleanup(call.End)
	return call
}

// killedWriterEnv names the file a re-executed test binary rewrites in a
// loop until it is killed.
const killedWriterEnv = "ASTRID_TEST_KILLED_WRITER_HOME"

// TestKilledWriterChild is the child of TestKillDuringWriteLeavesOldOrNew:
// it writes alternating versions of a large file until it is killed.
func TestKilledWriterChild(t *testing.T) {
	home := os.Getenv(killedWriterEnv)
	if home == "" {
		t.Skip("runs only as the child of TestKillDuringWriteLeavesOldOrNew")
	}
	call := childCall(t, home)
	versions := [][]byte{bytes.Repeat([]byte{'a'}, 16<<20), bytes.Repeat([]byte{'b'}, 16<<20)}
	for i := 0; ; i++ {
		if err := call.FSWrite("home://big", versions[i%2]); err != nil {
			t.Fatal(err)
		}
		fmt.Println("wrote") // the next write starts now: the parent may kill it
	}
}

// A writer killed with SIGKILL at any point leaves the file whole: the old
// version or the new one. The child reports each finished write; it is
// killed just as a later one begins (round decides which), so the kill
// lands inside a 16 MiB write.
func TestKillDuringWriteLeavesOldOrNew(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	homes := t.TempDir()
	home := filepath.Join(homes, "erin")
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), killedWriterEnv+"="+homes)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		for range round + 1 {
			if !lines.Scan() || lines.Text() != "wrote" {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("child did not report a write: %q %v", lines.Text(), lines.Err())
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		data, err := os.ReadFile(filepath.Join(home, "big"))
		if err != nil || !uniform(data, 16<<20) {
			t.Fatalf("round %d: after kill -9 the file has %d bytes (err %v), want one whole version", round, len(data), err)
		}
	}
}

// A replaced file keeps the permission bits it had; a new one gets what
// os.WriteFile would give it (0644 minus the umask).
func TestWriteKeepsTheFilesMode(t *testing.T) {
	w := newWriteFixture(t)
	for _, mode := range []fs.FileMode{0o600, 0o640, 0o755, 0o444} {
		p := filepath.Join(w.home, fmt.Sprintf("m%o", mode))
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := w.call.FSWrite("home://"+filepath.Base(p), []byte("new")); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("mode %o became %o", mode, fi.Mode().Perm())
		}
		if data, _ := os.ReadFile(p); string(data) != "new" {
			t.Errorf("mode %o: content %q", mode, data)
		}
	}
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.WriteFile(ref, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := os.Stat(ref)
	if err := w.call.FSWrite("home://fresh", []byte("x")); err != nil {
		t.Fatal(err)
	}
	got, err := os.Stat(filepath.Join(w.home, "fresh"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("new file mode %o, want %o as os.WriteFile gives", got.Mode().Perm(), want.Mode().Perm())
	}
	noTempFiles(t, w.home)
}

// Symlinks at the target: one inside the granted directory is followed (the
// file it names is replaced and the link stays); one leading out, directly,
// through a chain or through a symlinked directory, is refused and nothing
// outside changes; so is an absolute one, even to a file inside, as os.Root
// refuses it for reads; a loop is an error.
func TestWriteThroughSymlinks(t *testing.T) {
	w := newWriteFixture(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustLink := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(w.home, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.home, "real.txt"), []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(w.home, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	mustLink("real.txt", "rel-link")
	mustLink(filepath.Join(w.home, "real.txt"), "abs-link")
	mustLink("rel-link", "chain")
	mustLink("../real.txt", "sub/up-link")
	mustLink(secret, "out-abs")
	mustLink("../"+filepath.Base(outside)+"/secret", "out-rel")
	mustLink("out-abs", "out-chain")
	mustLink(outside, "out-dir")
	mustLink("loop-b", "loop-a")
	mustLink("loop-a", "loop-b")
	mustLink("sub", "sub-link")
	mustLink("../../real.txt", "sub/two-up") // lexically out of the home, physically too

	for _, name := range []string{"rel-link", "chain", "sub/up-link"} {
		t.Run("inside/"+name, func(t *testing.T) {
			body := "via " + name
			if err := w.call.FSWrite("home://"+name, []byte(body)); err != nil {
				t.Fatal(err)
			}
			if data, _ := os.ReadFile(filepath.Join(w.home, "real.txt")); string(data) != body {
				t.Fatalf("real.txt = %q, want %q", data, body)
			}
			if fi, err := os.Lstat(filepath.Join(w.home, name)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("%s is no longer a symlink: %v %v", name, fi, err)
			}
			if fi, _ := os.Stat(filepath.Join(w.home, "real.txt")); fi.Mode().Perm() != 0o640 {
				t.Fatalf("real.txt mode %o, want 0640 kept", fi.Mode().Perm())
			}
		})
	}
	for _, name := range []string{"abs-link", "out-abs", "out-rel", "out-chain", "out-dir/secret", "sub/two-up", "loop-a", "sub-link/../../x"} {
		t.Run("refused/"+name, func(t *testing.T) {
			err := w.call.FSWrite("home://"+name, []byte("pwned"))
			if err == nil {
				t.Fatal("write succeeded")
			}
			if code := hostapi.CodeOf(err); code != hostapi.CodeDenied && code != hostapi.CodeInvalid {
				t.Errorf("error %v (code %v), want denied or invalid", err, code)
			}
		})
	}
	if data, _ := os.ReadFile(secret); string(data) != "s3cret" {
		t.Fatalf("the file outside changed: %q", data)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("files appeared outside: %v", entries)
	}
	noTempFiles(t, w.home)
	noTempFiles(t, filepath.Join(w.home, "sub"))
}

// Writing over something that is not a regular file is refused rather than
// replacing it (a FIFO would otherwise block the write, a directory cannot
// be replaced by a file).
func TestWriteRefusesNonRegularTargets(t *testing.T) {
	w := newWriteFixture(t)
	if err := syscall.Mkfifo(filepath.Join(w.home, "pipe"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Mkdir(filepath.Join(w.home, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pipe", "dir"} {
		if err := w.call.FSWrite("home://"+name, []byte("x")); hostapi.CodeOf(err) != hostapi.CodeInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(w.home, "pipe")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
	noTempFiles(t, w.home)
}

// The temporary name cannot be pre-planted: even when an attacker knows the
// next name and plants a symlink (to a file outside) or a file there, the
// create (O_EXCL) refuses it and a fresh name is used; the planted entries
// are left as they were.
func TestTempNameCannotBePrePlanted(t *testing.T) {
	w := newWriteFixture(t)
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	names := []string{"aaaa", "bbbb", "cccc"}
	var next atomic.Int32
	orig := tempSuffix
	tempSuffix = func() string { return names[int(next.Add(1)-1)%len(names)] }
	t.Cleanup(func() { tempSuffix = orig })
	if err := os.Symlink(outside, filepath.Join(w.home, ".doc.astrid-aaaa.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.home, ".doc.astrid-bbbb.tmp"), []byte("planted"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := w.call.FSWrite("home://doc", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if next.Load() != 3 {
		t.Errorf("%d names tried, want 3 (two planted)", next.Load())
	}
	if data, _ := os.ReadFile(outside); string(data) != "untouched" {
		t.Fatalf("the symlink target was written: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(w.home, ".doc.astrid-bbbb.tmp")); string(data) != "planted" {
		t.Fatalf("the planted file was reused: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(w.home, "doc")); string(data) != "mine" {
		t.Fatalf("doc = %q", data)
	}
	if fi, _ := os.Lstat(filepath.Join(w.home, "doc")); !fi.Mode().IsRegular() {
		t.Fatalf("doc is %v, want a regular file", fi.Mode())
	}

	// Every name taken: the write fails and leaves no file of its own.
	tempSuffix = func() string { return "aaaa" }
	if err := w.call.FSWrite("home://doc", []byte("again")); err == nil {
		t.Fatal("write succeeded with every temporary name taken")
	}
	if data, _ := os.ReadFile(filepath.Join(w.home, "doc")); string(data) != "mine" {
		t.Fatalf("doc = %q after a failed write", data)
	}
}

// Concurrent writers to one file each replace it whole; the result is one
// of their versions and no temporary file is left.
func TestConcurrentWritersDoNotCollide(t *testing.T) {
	w := newWriteFixture(t)
	const size = 256 << 10
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			call, _ := w.call.c.Begin(context.Background(), "erin")
			defer call.End()
			for range 10 {
				if err := call.FSWrite("home://shared", bytes.Repeat([]byte{byte('a' + i)}, size)); err != nil {
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
	data, err := os.ReadFile(filepath.Join(w.home, "shared"))
	if err != nil || !uniform(data, size) {
		t.Fatalf("final file %d bytes, err %v; want one writer's whole version", len(data), err)
	}
	noTempFiles(t, w.home)
}

// fsizeChildEnv names the home of a re-executed test binary that writes
// under a file size limit, so the write itself fails part way.
const fsizeChildEnv = "ASTRID_TEST_FSIZE_HOME"

func TestFailedWriteChild(t *testing.T) {
	homes := os.Getenv(fsizeChildEnv)
	if homes == "" {
		t.Skip("runs only as the child of TestFailedWriteLeavesOldFileAndNoTemp")
	}
	call := childCall(t, homes)
	// SIGXFSZ is ignored by the Go runtime, so the write returns EFBIG.
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 1 << 20, Max: 1 << 20}); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	err := call.FSWrite("home://doc", bytes.Repeat([]byte{'n'}, 2<<20))
	if err == nil {
		t.Fatal("a write past RLIMIT_FSIZE succeeded")
	}
	if errors.Is(err, syscall.EFBIG) || strings.Contains(err.Error(), "file too large") {
		fmt.Println("write failed part way:", err)
	}
}

// A write that fails part way (here: the file size limit) leaves the old
// content and removes its temporary file.
func TestFailedWriteLeavesOldFileAndNoTemp(t *testing.T) {
	homes := t.TempDir()
	home := filepath.Join(homes, "erin")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "doc"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailedWriteChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fsizeChildEnv+"="+homes)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("SKIP")) {
		t.Skipf("child skipped:\n%s", out)
	}
	if !bytes.Contains(out, []byte("write failed part way")) {
		t.Fatalf("the child's write did not fail on the size limit:\n%s", out)
	}
	if data, _ := os.ReadFile(filepath.Join(home, "doc")); string(data) != "old" {
		t.Fatalf("doc = %d bytes after a failed write, want the old content", len(data))
	}
	noTempFiles(t, home)
}
