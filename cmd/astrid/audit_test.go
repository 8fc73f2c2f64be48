package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/hostkey"
	"github.com/astrid-go/astrid/internal/testutil"
)

// auditHome makes a home whose chain of "default" holds n tool-call
// entries and whose system chain one load, signed with the home's host key
// as the kernel signs them; now is the writer's clock (nil: the real one).
func auditHome(t *testing.T, n int, now func() time.Time) string {
	t.Helper()
	home := t.TempDir()
	st, err := openStore(home)
	if err != nil {
		t.Fatal(err)
	}
	key, err := hostkey.Load(st)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	l, err := audit.Open(audit.Options{Dir: config.Layout(home).Audit, Key: key, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Append(ctx, audit.Entry{Kind: audit.KindCapsuleLoaded, Capsule: "astrid-capsule-fs"}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		kind := audit.KindToolStarted
		if i%2 == 1 {
			kind = audit.KindToolEnded
		}
		if err := l.Append(ctx, audit.Entry{Principal: "default", Kind: kind, Subject: "read_file", Capsule: "astrid-capsule-fs",
			Outcome: "ok", Detail: map[string]string{"call_id": fmt.Sprintf("call_%d", i/2)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return home
}

func chainLines(t *testing.T, home string) (string, [][]byte) {
	t.Helper()
	path := audit.ChainPath(config.Layout(home).Audit, "default")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, bytes.SplitAfter(b, []byte("\n"))[:bytes.Count(b, []byte("\n"))]
}

// Every way of altering a chain is caught by `astrid audit verify`, run
// as its own process, which exits 1 naming the first bad entry.
func TestAuditVerifyDetectsTampering(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, home, path string, ls [][]byte)
		want string
	}{
		{"one byte edited", func(t *testing.T, home, path string, ls [][]byte) {
			ls[2] = bytes.Replace(ls[2], []byte(`"outcome":"ok"`), []byte(`"outcome":"ko"`), 1)
			os.WriteFile(path, bytes.Join(ls, nil), 0o600)
		}, "entry 4 (line 4 of chains/default.log): prev hash does not match entry 3's hash (entry 3 edited"},
		{"an entry removed", func(t *testing.T, home, path string, ls [][]byte) {
			os.WriteFile(path, bytes.Join(append(ls[:1:1], ls[2:]...), nil), 0o600)
		}, "entry 3 (line 2 of chains/default.log): seq 3 where 2 was expected"},
		{"two entries swapped", func(t *testing.T, home, path string, ls [][]byte) {
			ls[3], ls[4] = ls[4], ls[3]
			os.WriteFile(path, bytes.Join(ls, nil), 0o600)
		}, "entry 5 (line 4 of chains/default.log): seq 5 where 4 was expected"},
		{"an entry inserted", func(t *testing.T, home, path string, ls [][]byte) {
			// A well-formed entry of another host's chain.
			_, other, _ := ed25519.GenerateKey(rand.Reader)
			dir := t.TempDir()
			l, _ := audit.Open(audit.Options{Dir: dir, Key: other})
			for range 3 {
				l.Append(context.Background(), audit.Entry{Principal: "default", Kind: audit.KindNote})
			}
			l.Close()
			forged, _ := os.ReadFile(audit.ChainPath(dir, "default"))
			fl := bytes.SplitAfter(forged, []byte("\n"))
			os.WriteFile(path, bytes.Join(append(ls[:2:2], append([][]byte{fl[2]}, ls[2:]...)...), nil), 0o600)
		}, "entry 3 (line 3 of chains/default.log): prev hash does not match entry 2's hash"},
		{"the seal's signature edited", func(t *testing.T, home, path string, ls [][]byte) {
			i := bytes.LastIndex(ls[6], []byte(`"sig":"`)) + 7
			ls[6][i] = map[bool]byte{true: 'B', false: 'A'}[ls[6][i] == 'A']
			os.WriteFile(path, bytes.Join(ls, nil), 0o600)
		}, "entry 7 (line 7 of chains/default.log): signature does not verify with the host key"},
		{"truncated", func(t *testing.T, home, path string, ls [][]byte) {
			os.WriteFile(path, bytes.Join(ls[:4], nil), 0o600)
		}, "entry 5 (line 5 of chains/default.log): missing: the chain ends at entry 4 but the checkpoint signed at"},
		{"cut mid-entry", func(t *testing.T, home, path string, ls [][]byte) {
			os.WriteFile(path, bytes.Join(append(ls[:5:5], ls[5][:30]), nil), 0o600)
		}, "entry 6 (line 6 of chains/default.log): line 6: unfinished"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := auditHome(t, 6, nil)
			if out, code := runProcess(t, home, "audit", "verify"); code != 0 || !strings.Contains(out, "ok: 2 chains, 7 entries") {
				t.Fatalf("before: exit %d: %s", code, out)
			}
			path, ls := chainLines(t, home)
			tc.edit(t, home, path, ls)
			out, code := runProcess(t, home, "audit", "verify")
			if code != 1 || !strings.Contains(out, "principal default: "+tc.want) {
				t.Fatalf("exit %d, want 1 and %q:\n%s", code, tc.want, out)
			}
		})
	}
}

// A clock set back an hour mid-chain: the entries keep non-decreasing
// times and the chain verifies.
func TestAuditClockSetBackwards(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	calls := 0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 3 {
			now = now.Add(-time.Hour)
		}
		return now
	}
	home := auditHome(t, 4, clock)
	if out, code := runProcess(t, home, "audit", "verify"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	out, code := runProcess(t, home, "audit", "show", "--principal", "default", "--json")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, out)
	}
	var last time.Time
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if e.Time.Before(last) {
			t.Fatalf("entry %d's time %s is before %s", e.Seq, e.Time, last)
		}
		last = e.Time
	}
}

func TestAuditShow(t *testing.T) {
	home := auditHome(t, 4, nil)
	out, code := runProcess(t, home, "audit", "show")
	if code != 0 || strings.Count(out, "\n") != 5 || !strings.Contains(out, "(system) #1 capsule.loaded capsule=astrid-capsule-fs") ||
		!strings.Contains(out, "default #4 tool.ended read_file capsule=astrid-capsule-fs outcome=ok call_id=call_1") {
		t.Fatalf("show: exit %d:\n%s", code, out)
	}
	out, _ = runProcess(t, home, "audit", "show", "--principal", "default", "--limit", "2")
	if strings.Count(out, "\n") != 2 || strings.Contains(out, "(system)") {
		t.Fatalf("--principal default --limit 2:\n%s", out)
	}
	out, _ = runProcess(t, home, "audit", "show", "--system", "--json")
	var e audit.Entry
	if err := json.Unmarshal([]byte(out), &e); err != nil || e.Kind != audit.KindCapsuleLoaded {
		t.Fatalf("--system --json: %v: %s", err, out)
	}
	if out, _ = runProcess(t, home, "audit", "show", "--since", "2099-01-01"); out != "" {
		t.Fatalf("--since the future: %s", out)
	}
	for _, bad := range [][]string{{"--principal", "../x"}, {"--since", "yesterday"}, {"--limit", "-1"}} {
		out, code := runProcess(t, home, append([]string{"audit", "show"}, bad...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", bad, code, out)
		}
	}
	// A store replaced since: verify refuses to check against a key it
	// would have to make.
	if err := os.Remove(config.Layout(home).State); err != nil {
		t.Fatal(err)
	}
	if st, err := openStore(home); err != nil {
		t.Fatal(err)
	} else {
		st.Close()
	}
	if out, code := runProcess(t, home, "audit", "verify"); code != 1 || !strings.Contains(out, "holds no host signing key") {
		t.Fatalf("verify without the host key: exit %d: %s", code, out)
	}
	empty := t.TempDir()
	if out, code := runProcess(t, empty, "audit", "verify"); code != 0 || !strings.Contains(out, "no audit chains") {
		t.Fatalf("verify of an empty home: exit %d: %s", code, out)
	}
}

// A daemon killed with SIGKILL during a burst of tool calls: every call a
// client got its result for has its start and end in the chain, and the
// chain verifies. `astrid audit verify` and `show` also work while the
// daemon runs and appends.
func TestAuditKill9DuringToolCallBurst(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	const files = 80
	for i := range files {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("file %d", i)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pid := startedPid(t, home, ws)
	var (
		mu    sync.Mutex
		acked []string // the arguments of the calls answered
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < files && !stop.Load(); i += 4 {
				args := fmt.Sprintf(`{"file_path":"f%d.txt"}`, i)
				cmd := astridProcess(home, "tool", "call", "read_file", args, "--workspace", ws, "--timeout", "30s")
				out, err := cmd.Output()
				if err == nil && strings.TrimSpace(string(out)) == fmt.Sprintf("file %d", i) {
					mu.Lock()
					acked = append(acked, args)
					mu.Unlock()
				}
			}
		})
	}
	n := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	testutil.WaitFor(t, daemonPatience, "eight calls answered by the daemon", func() bool { return n() >= 8 })
	if out, code := runProcess(t, home, "audit", "verify"); code != 0 {
		t.Fatalf("verify while the daemon runs: exit %d: %s", code, out)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()
	testutil.WaitFor(t, daemonPatience, "the daemon gone", func() bool { return syscall.Kill(pid, 0) != nil })

	ended := map[string]int{}
	started := map[string]int{}
	err := audit.Show(config.Layout(home).Audit, audit.Filter{Principals: []string{"default"}}, func(r audit.Record) error {
		switch r.Entry.Kind {
		case audit.KindToolStarted:
			started[r.Entry.Detail["args_sha256"]]++
		case audit.KindToolEnded:
			ended[r.Entry.Detail["call_id"]]++
			if r.Entry.Outcome == "ok" {
				ended[r.Entry.Detail["call_id"]+"/ok"]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d calls answered before and around the kill; %d starts, %d ends recorded", n(), len(started), len(ended))
	for _, args := range acked {
		sum := sha256.Sum256([]byte(args))
		if started[hex.EncodeToString(sum[:])] == 0 {
			t.Errorf("call %s was answered but its start is not in the chain", args)
		}
	}
	oks := 0
	for k, v := range ended {
		if strings.HasSuffix(k, "/ok") {
			oks += v
		}
	}
	if oks < len(acked) {
		t.Errorf("%d calls answered, only %d ends with outcome ok in the chain", len(acked), oks)
	}
	if out, code := runProcess(t, home, "audit", "verify"); code != 0 {
		t.Fatalf("verify after kill -9: exit %d: %s", code, out)
	}
}
