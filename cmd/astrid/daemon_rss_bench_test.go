package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/testutil"
)

// BenchmarkDaemonIdleRSS is issue 19's memory figure: the resident set of
// an idle `astrid daemon` with the built-ins loaded. It builds the real
// binary (the test binary carries the tests' code too), starts the daemon
// on a fresh home, lets it settle, and reports VmRSS and its peak VmHWM
// from /proc. Run:
//
//	go test -run '^$' -bench DaemonIdleRSS -benchtime 1x ./cmd/astrid/
func BenchmarkDaemonIdleRSS(b *testing.B) {
	bin := buildAstrid(b)
	home, ws := filepath.Join(b.TempDir(), "home"), b.TempDir()
	for b.Loop() {
		cmd := exec.Command(bin, "daemon", "--detached", "--workspace", ws)
		cmd.Env = append(os.Environ(), "ASTRID_HOME="+home)
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		testutil.WaitFor(b, daemonPatience, "the daemon to get ready", func() bool {
			pid, err := daemon.Running(home)
			return err == nil && pid == cmd.Process.Pid
		})
		// Idle: booted, a few status rewrites and watcher scans done. The
		// sleep is what is measured (memory after 5 s idle), not a wait.
		time.Sleep(5 * time.Second)
		rss, hwm, anon := procMemKiB(b, cmd.Process.Pid)
		b.ReportMetric(float64(rss)/1024, "idle-RSS-MiB")
		b.ReportMetric(float64(hwm)/1024, "peak-RSS-MiB")
		// The anonymous part (heap, stacks) is the program's own; the
		// rest is the binary's pages, as many as the page cache maps
		// (with large folios its text is mapped in 2 MiB pages, which
		// moves VmRSS by 10–20 MiB from one session to the next).
		b.ReportMetric(float64(anon)/1024, "idle-anon-MiB")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("daemon exit: %v", err)
		}
	}
}

// buildAstrid builds the product binary, as `make build` does, into a
// temporary directory and returns its path.
func buildAstrid(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "astrid")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// procMemKiB reads VmRSS, VmHWM and RssAnon of pid.
func procMemKiB(b *testing.B, pid int) (rss, hwm, anon int) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		case "RssAnon":
			anon = n
		}
	}
	return rss, hwm, anon
}
