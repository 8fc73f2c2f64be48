package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/sandbox"
	"github.com/astrid-go/astrid/internal/store"
)

// doctorOf runs `astrid doctor --json` with env added and returns its
// findings by check (the details of one check joined) and its exit status.
func doctorOf(t *testing.T, home string, env ...string) (map[string][]finding, int) {
	t.Helper()
	cmd := astridProcess(home, "doctor", "--json")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.Output()
	code := exitStatus(t, err)
	var list []finding
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("doctor --json: exit %d: %v: %s", code, err, out)
	}
	by := map[string][]finding{}
	for _, f := range list {
		by[f.Check] = append(by[f.Check], f)
	}
	return by, code
}

// hasFinding reports whether one of fs has status and mentions every part.
func hasFinding(fs []finding, status string, parts ...string) bool {
	for _, f := range fs {
		all := f.Status == status
		for _, p := range parts {
			all = all && strings.Contains(f.Detail+" fix: "+f.Fix, p)
		}
		if all {
			return true
		}
	}
	return false
}

// doctor finds each kind of problem it knows, names its fix, exits 1; once
// every fix is applied it finds none and exits 0 (unless this machine
// cannot confine processes, which it then says).
func TestDoctorFindsProblemsWithTheirFixes(t *testing.T) {
	home := t.TempDir()
	if out, code := runProcess(t, home, "init"); code != 0 {
		t.Fatalf("init: %s", out)
	}
	p := daemon.PathsOf(home)
	capsules := filepath.Join(home, "capsules")
	key := filepath.Join(home, "secrets.key")
	for _, step := range []error{
		os.Chmod(capsules, 0o777),
		os.Chmod(key, 0o644),                           // init made it (the host key is sealed with it)
		os.WriteFile(p.Pid, []byte("999999\n"), 0o600), // a killed daemon's
		os.WriteFile(p.Socket, nil, 0o600),
		os.WriteFile(filepath.Join(home, "config.toml"), []byte("[log]\nlevl = \"info\"\n"), 0o600),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.URL.Path)
		w.WriteHeader(http.StatusUnauthorized) // there, if not for us
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // nothing listens there now

	env := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "ANTHROPIC_BASE_URL=" + deadURL, "OPENAI_API_KEY=", "ANTHROPIC_API_KEY="}
	by, code := doctorOf(t, home, env...)
	if code != 1 {
		t.Errorf("doctor with problems exited %d", code)
	}
	for _, want := range []struct {
		check, status string
		parts         []string
	}{
		{"home", findingProblem, []string{capsules + " is writable by other users (mode 0777)", "chmod 700 " + capsules}},
		{"home", findingProblem, []string{key + " is readable or writable by other users (mode 0644)", "chmod 600 " + key}},
		{"config", findingProblem, []string{"config.toml:2", "did you mean log.level"}},
		{"daemon", findingProblem, []string{"left " + p.Pid + ", " + p.Socket, "rm -f " + p.Pid + " " + p.Socket}},
		{"provider", findingOK, []string{"openai: " + srv.URL + "/v1/models answered HTTP 401", "no api_key"}},
		{"provider", findingProblem, []string{"anthropic: " + deadURL + "/v1/models did not answer", "capsule env set astrid-capsule-anthropic base_url"}},
		{"store", findingOK, []string{"state.db is consistent"}}, // init created it, with the host key
	} {
		if !hasFinding(by[want.check], want.status, want.parts...) {
			t.Errorf("no %s finding %q among %+v", want.status, want.parts, by[want.check])
		}
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != "/v1/models" {
		t.Errorf("the provider's server was asked %q", asked)
	}
	mu.Unlock()

	// The fixes, as doctor names them.
	for _, step := range []error{
		os.Chmod(capsules, 0o700),
		os.Chmod(key, 0o600),
		os.Remove(p.Pid),
		os.Remove(p.Socket),
		os.WriteFile(filepath.Join(home, "config.toml"), []byte("[log]\nlevel = \"info\"\n"), 0o600),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	by, code = doctorOf(t, home, "OPENAI_BASE_URL="+srv.URL+"/v1", "ANTHROPIC_BASE_URL=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")
	confines := sandbox.Need(sandbox.ABI()) == nil
	for check, fs := range by {
		for _, f := range fs {
			if f.Status == findingProblem && (check != "sandbox" || confines) {
				t.Errorf("after the fixes: %+v", f)
			}
		}
	}
	if confines && code != 0 {
		t.Errorf("doctor with no problem exited %d", code)
	}
	if !hasFinding(by["provider"], findingSkipped, "anthropic: not configured") {
		t.Errorf("an unconfigured provider: %+v", by["provider"])
	}

	// A sound state.db is checked page by page; one that is not a
	// database is a problem with a way out.
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if by, _ = doctorOf(t, home); !hasFinding(by["store"], findingOK, "state.db is consistent") {
		t.Errorf("a sound store: %+v", by["store"])
	}
	if err := os.WriteFile(filepath.Join(home, "state.db"), []byte(strings.Repeat("not a bbolt file ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	if by, _ = doctorOf(t, home); !hasFinding(by["store"], findingProblem, "state.db", "move "+filepath.Join(home, "state.db")+" aside") {
		t.Errorf("a broken store: %+v", by["store"])
	}

	// The text form puts each fix under its problem.
	if err := os.Chmod(capsules, 0o775); err != nil {
		t.Fatal(err)
	}
	out, code := runProcess(t, home, "doctor", "--offline")
	if code != 1 || !strings.Contains(out, "PROBLEM  home") || !strings.Contains(out, "fix: chmod 700 "+capsules) || !strings.Contains(out, "skipped  provider  --offline") {
		t.Errorf("doctor --offline: exit %d:\n%s", code, out)
	}
}
