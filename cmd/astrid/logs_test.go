package main

import (
	"bufio"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/testutil"
)

// A record is shown to a person as time, level, message and fields; a
// capsule's record names it unless --capsule already did.
func TestFormatLogRecord(t *testing.T) {
	rec := `{"time":"2026-12-02T03:45:48.072Z","level":"INFO","msg":"net: listening","capsule":"astrid-uplink","principal":"","addr":"unix:/x.sock","handle":1,"err":{"a":[1,2]}}`
	got := formatLogRecord([]byte(rec), false)
	when := time.Date(2026, 12, 2, 3, 45, 48, 72e6, time.UTC).Local().Format("2006-01-02 15:04:05.000")
	want := when + ` INFO  net: listening capsule=astrid-uplink principal="" addr=unix:/x.sock handle=1 err={"a":[1,2]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := formatLogRecord([]byte(rec), true); strings.Contains(got, "capsule=") {
		t.Fatalf("--capsule shown again: %s", got)
	}
}

// What a capsule logs reaches the person's terminal: no escape sequence,
// control character or invalid UTF-8 from a record is printed as is, in the
// message, a field's key or value, the capsule id, or a line that is not
// JSON at all; with --json too.
func TestLogRecordsCannotDriveTheTerminal(t *testing.T) {
	for name, rec := range map[string]string{
		"ansi in msg":        `{"level":"WARN","msg":"\u001b[2J\u001b[31mpwned","capsule":"c"}`,
		"ansi in value":      `{"level":"INFO","msg":"m","err":"\u001b]0;title\u0007"}`,
		"ansi in key":        `{"level":"INFO","msg":"m","\u001b[1mk":"v"}`,
		"ansi in capsule":    `{"level":"INFO","msg":"m","capsule":"\u001b[8m"}`,
		"ansi in level":      `{"level":"\u001b[5mINFO","msg":"m"}`,
		"ansi in time":       `{"time":"\u001b[Hnow","msg":"m"}`,
		"carriage return":    `{"level":"INFO","msg":"fine\rERROR everything is broken"}`,
		"raw escape, torn":   "{\"msg\":\"\x1b[2J",
		"not json":           "plain \x1b[31mred\x07 line",
		"invalid utf-8":      "{\"msg\":\"\xff\xfe\"}",
		"c1 control":         `{"msg":"\u009b31m"}`,
		"bidi override":      `{"msg":"\u202eevil"}`,
		"escape in raw json": `{"msg":"m","n":1e3,"o":"` + "\x1b" + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			logPrinter(&b, "", false)([]byte(rec))
			logPrinter(&b, "", true)([]byte(rec))
			if !utf8.ValidString(b.String()) {
				t.Fatalf("invalid UTF-8 reached the terminal: %q", b.String())
			}
			for _, r := range strings.TrimSuffix(b.String(), "\n") {
				if r == '\n' {
					continue // the two lines' separator
				}
				if r == '\x1b' || r == '\r' || r == '\a' || r == 0x9b || r == 0x202e || (r < 0x20) || (r >= 0x7f && r < 0xa0) {
					t.Fatalf("%q reached the terminal in %q", r, b.String())
				}
			}
		})
	}
}

func TestLogMatches(t *testing.T) {
	for rec, want := range map[string]bool{
		`{"msg":"m","capsule":"fs"}`:            true,
		`{"msg":"m","capsule":"fs2"}`:           false,
		`{"msg":"m","at_capsule":"fs"}`:         false,
		`{"msg":"capsule fs","principal":"fs"}`: false,
		`{"msg":"m","capsule":"f\u0073"}`:       true,
		`{"msg":"m","capsule":["fs"]}`:          false,
		`not json "capsule":"fs"`:               false,
		`{"msg":"m","nested":{"capsule":"fs"}}`: false,
	} {
		if got := logMatches([]byte(rec), "fs"); got != want {
			t.Errorf("logMatches(%s) = %v, want %v", rec, got, want)
		}
	}
}

// astrid logs against a real daemon process: a home with no log says so
// (exit 1); the log shows the daemon's records for a person, --capsule keeps
// one capsule's, --json prints JSON lines; -f prints a record the daemon
// writes while it follows, and stops at SIGINT.
func TestLogsOfARealDaemon(t *testing.T) {
	home := t.TempDir()
	ws := t.TempDir()
	if out, code := runProcess(t, home, "logs"); code != 1 || !strings.Contains(out, "no daemon log at "+daemon.PathsOf(home).Log) {
		t.Fatalf("logs before any daemon: exit %d: %s", code, out)
	}
	startedPid(t, home, ws)
	defer runProcess(t, home, "stop")

	out, code := runProcess(t, home, "logs")
	if code != 0 || !strings.Contains(out, "INFO  daemon ready") || strings.Contains(out, `"msg"`) {
		t.Fatalf("logs: exit %d: %s", code, out)
	}
	out, code = runProcess(t, home, "logs", "--capsule", "astrid-uplink")
	if code != 0 || !strings.Contains(out, "uplink: listening") || strings.Contains(out, "daemon ready") {
		t.Fatalf("logs --capsule astrid-uplink: exit %d: %s", code, out)
	}
	out, code = runProcess(t, home, "logs", "--json", "-n", "1")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, `{"time":`) {
		t.Fatalf("logs --json -n 1: exit %d: %s", code, out)
	}
	if out, code := runProcess(t, home, "logs", "-n", "-3"); code != 2 {
		t.Fatalf("logs -n -3: exit %d: %s", code, out)
	}

	// Follow, with only the uplink's records; a client connecting makes
	// one. -n 0 prints the whole backlog first, with the connects so far.
	backlog, _ := runProcess(t, home, "logs", "-n", "0", "--capsule", "astrid-uplink")
	connects := strings.Count(backlog, "connected as default")
	follower := astridProcess(home, "logs", "-f", "-n", "0", "--capsule", "astrid-uplink")
	stdout, err := follower.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follower.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = follower.Process.Kill() }()
	lines := make(chan string, 100)
	var reading sync.WaitGroup
	reading.Add(1)
	go func() {
		defer reading.Done()
		defer close(lines)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	if out, code := runProcess(t, home, "tool", "list"); code != 0 {
		t.Fatalf("tool list: exit %d: %s", code, out)
	}
	seen := 0
	testutil.WaitFor(t, daemonPatience, fmt.Sprintf("logs -f to show the new client's record (the backlog had %d)", connects), func() bool {
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatal("logs -f ended by itself")
				}
				if strings.Contains(line, "capsule=") || strings.Contains(line, "daemon ready") {
					t.Fatalf("logs -f --capsule astrid-uplink printed %s", line)
				}
				if strings.Contains(line, "connected as default") {
					seen++
				}
			default:
				return seen > connects
			}
		}
	})
	if err := follower.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	reading.Wait()
	if err := follower.Wait(); err != nil {
		t.Fatalf("logs -f after SIGINT: %v", err)
	}
}
