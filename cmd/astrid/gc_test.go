package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/undo"
	"github.com/astrid-go/astrid/internal/store"
)

var gcSessionLine = regexp.MustCompile(`session (s-[0-9a-f]+) \(continue`)

// gc deletes every principal's sessions older than the age (flag over
// config), lists without deleting under --dry-run, keeps younger ones,
// and removes compiled code of other wazero versions and stale entries.
func TestGCRemovesOldSessionsAndStaleCaches(t *testing.T) {
	// Parallel: among the longest of a race run (wasm compiled by a
	// race-instrumented kernel, builds), and it changes no process-wide state.
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# Demo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	session := func(principal string) string {
		t.Helper()
		out, code := runProcess(t, home, "-p", "hello", "--provider", "replay", "--workspace", ws, "--principal", principal)
		m := gcSessionLine.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("-p as %s: exit %d:\n%s", principal, code, out)
		}
		return m[1]
	}
	// A replay script whose "write" turn changes a file, so the undo
	// capsule keeps a snapshot of the default principal's session.
	script := filepath.Join(ws, "script.jsonl")
	if err := os.WriteFile(script, []byte(writeScript+"{\"match\": {\"user\": \"\"}}\n{\"TextDelta\": \"Hi.\"}\n\"Done\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	set := astridProcess(home, "capsule", "env", "set", "astrid-capsule-replay", "script")
	set.Stdin = strings.NewReader(script)
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("env set script: %v: %s", err, out)
	}
	mine, alices := session("default"), session("alice")
	if out, code := runProcess(t, home, "-p", "write the notes", "--yes", "--provider", "replay", "--workspace", ws, "--session", mine); code != 0 || !strings.Contains(out, "✓ write_file") {
		t.Fatalf("write turn: exit %d:\n%s", code, out)
	}
	listed := func(principal, id string) bool {
		out, _ := runProcess(t, home, "session", "list", "--no-daemon", "--principal", principal, "--workspace", ws)
		return strings.Contains(out, id)
	}

	cache := filepath.Join(home, "cache", "wasm")
	other := filepath.Join(cache, "wazero-v0.0.1-amd64-linux")
	current := filepath.Join(cache, wazeroCacheDir())
	for _, d := range []string{other, current} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for path, body := range map[string]string{filepath.Join(other, "x"): "old code", filepath.Join(current, "stale"): "stale", filepath.Join(current, "fresh"): "fresh"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-100 * 24 * time.Hour)
	if err := os.Chtimes(filepath.Join(current, "stale"), long, long); err != nil {
		t.Fatal(err)
	}

	out, code := runProcess(t, home, "gc", "--dry-run", "--older-than", "1ms", "--workspace", ws)
	for _, want := range []string{"would delete session " + mine + " of default", "; 1 undo snapshot, ", "would delete session " + alices + " of alice", "; no undo snapshots)", "would remove " + other, "would remove " + filepath.Join(current, "stale"), "would remove 2 sessions (1 undo snapshot, ", "), 3 cache entries"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("gc --dry-run: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	if !listed("default", mine) || !listed("alice", alices) {
		t.Fatal("gc --dry-run deleted a session")
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("gc --dry-run removed a cache entry")
	}

	// The default age (90 days) keeps today's sessions; the stale
	// entry of 100 days goes.
	if out, code := runProcess(t, home, "gc", "--workspace", ws); code != 0 || !strings.Contains(out, "removed 0 sessions (no undo snapshots), 2 cache entries") {
		t.Errorf("gc: exit %d:\n%s", code, out)
	}
	if !listed("default", mine) {
		t.Error("gc deleted a session younger than session_max_age")
	}
	if _, err := os.Stat(filepath.Join(current, "fresh")); err != nil {
		t.Errorf("gc removed a fresh cache entry: %v", err)
	}
	for _, gone := range []string{other, filepath.Join(current, "stale")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}

	// config.toml's age, then the flag over it.
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[gc]\nsession_max_age = \"1ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runProcess(t, home, "gc", "--older-than", "1h", "--workspace", ws); code != 0 || !strings.Contains(out, "removed 0 sessions") {
		t.Errorf("gc --older-than 1h: exit %d:\n%s", code, out)
	}
	out, code = runProcess(t, home, "gc", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "removed 2 sessions") || !strings.Contains(out, "deleted session "+alices+" of alice") {
		t.Errorf("gc with session_max_age = 1ms: exit %d:\n%s", code, out)
	}
	if listed("default", mine) || listed("alice", alices) {
		t.Error("a session gc said it deleted is still listed")
	}
	// What the undo capsule kept of the session went with it, in state.db.
	if !strings.Contains(out, "deleted session "+mine+" of default") || !strings.Contains(out, "removed 2 sessions (1 undo snapshot, ") {
		t.Errorf("gc does not say the undo snapshot went:\n%s", out)
	}
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	left, err := st.KV("default", undo.ID).List("")
	st.Close()
	if err != nil || len(left) != 0 {
		t.Errorf("the undo capsule still keeps %q (%v) of a deleted session", left, err)
	}
	if out, code := runProcess(t, home, "gc", "--older-than", "-1h"); code != 2 || !strings.Contains(out, "must be 0") {
		t.Errorf("gc --older-than -1h: exit %d:\n%s", code, out)
	}
}

// A build that does not know its wazero version (a replaced module) cannot
// tell another version's directory from its own by name: it keeps them.
func TestGCKeepsTheCacheWhenItsVersionIsUnknown(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "wazero-v0.0.1-amd64-linux")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "x"), []byte("code"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if n, _, errs := gcWasmCache(dir, "", time.Hour, false, &out); n != 0 || len(errs) != 0 {
		t.Fatalf("removed %d entries (%v): %s", n, errs, out.String())
	}
	if n, _, _ := gcWasmCache(dir, "wazero-v9-amd64-linux", time.Hour, true, &out); n != 1 {
		t.Fatalf("with a known version, the other version's directory: %d entries", n)
	}
	if _, err := os.Stat(filepath.Join(old, "x")); err != nil {
		t.Fatal("a dry run removed it")
	}
}
