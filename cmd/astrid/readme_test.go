package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/testutil"
)

// readmeRow says how one README example is exercised when running it as
// written, in the README's order, is not all: what it must print and
// exit with, a rewrite (with its reason) for what cannot run here as
// written, or a run of its own (a terminal, a process that runs until
// stopped). An example without a row is still run, and must exit 0.
type readmeRow struct {
	// why is the reason for a rewrite, an own run or a skip.
	why string
	// rewrite turns the line into what runs here.
	rewrite func(r *readmeRun, line string) string
	// env is added to the line's environment.
	env func(r *readmeRun) []string
	// code is the exit status expected; want, parts of its output.
	code int
	want []string
	// run replaces running the line to its end (why says how instead).
	run func(t *testing.T, r *readmeRun, line string)
	// after checks what the example did, or tidies up after it.
	after func(t *testing.T, r *readmeRun, out string)
	// skip, when set, is why the example cannot run here at all.
	skip string
}

// readmeRun is the state the examples share: one $ASTRID_HOME (~/.astrid
// of a $HOME of the test's), one workspace holding the files they name,
// and the fake servers standing in for the network.
type readmeRun struct {
	home, astridHome, ws string
	env                  []string
	session              string
	openai, anthropic    *httptest.Server
	openaiAuth           func() []string
	web                  *httptest.Server
}

// readmeSession is the replay turn's session id in its closing line.
var readmeSession = regexp.MustCompile(`session (s-[0-9a-f]{32})`)

// readmeRows maps an example (as written, its comment cut) to how it is
// exercised; every row must match an example of README.md.
var readmeRows = map[string]readmeRow{
	`make build && bin/astrid -p "What does README.md say?" --provider replay`: {
		why:     "the binary under test is what make build builds",
		rewrite: func(_ *readmeRun, l string) string { return strings.TrimPrefix(l, "make build && ") },
		want:    []string{`→ read_file {"file_path":"README.md"}`, "I read README.md.", "(continue with --session s-"},
		after: func(t *testing.T, r *readmeRun, out string) {
			m := readmeSession.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no session id in:\n%s", out)
			}
			r.session = m[1]
		},
	},
	`bin/astrid -p - --provider replay < question.txt`: {want: []string{"I read README.md."}},
	`git diff | bin/astrid -p "review this"`: {
		want: []string{"I read README.md.", "the offline replay script answered, not a model"},
	},
	`bin/astrid -p "and then?" --session s-da4b…`: {
		why:     "s-da4b… stands for the session of the first example",
		rewrite: func(r *readmeRun, l string) string { return strings.ReplaceAll(l, "s-da4b…", r.session) },
		want:    []string{"I read README.md."},
	},
	`bin/astrid -p "..." --json`: {want: []string{`{"`}},
	`bin/astrid chat`: {
		why: "needs a terminal: run in tmux, left with two Ctrl-C; the daemon it starts is stopped after",
		run: readmeChat,
	},
	`ANTHROPIC_API_KEY=sk-ant-… bin/astrid -p "..." --provider anthropic`: {
		why:  "needs Anthropic: ANTHROPIC_BASE_URL points at a local server replaying a recorded Messages stream",
		env:  func(r *readmeRun) []string { return []string{"ANTHROPIC_BASE_URL=" + r.anthropic.URL} },
		want: []string{"Hello!"},
	},
	`bin/astrid -p "and then?" --continue`: {want: []string{"I read README.md."}},
	`bin/astrid session list`: {
		after: func(t *testing.T, r *readmeRun, out string) {
			if !strings.Contains(out, r.session) {
				t.Fatalf("session list lacks %s:\n%s", r.session, out)
			}
		},
	},
	`bin/astrid session show s-da4b…`: {
		why:     "s-da4b… stands for the session of the first example",
		rewrite: func(r *readmeRun, l string) string { return strings.ReplaceAll(l, "s-da4b…", r.session) },
		want:    []string{"user: What does README.md say?", `→ read_file {"file_path":"README.md"}`},
	},
	`bin/astrid models list`: {
		want: []string{"* ", "replay:replay", "openai:gpt-5.5", "openai:gpt-5.4-mini", "anthropic:claude-opus-5-5", "anthropic:claude-sonnet-5-5"},
	},
	`bin/astrid models set openai:gpt-5.5`: {
		want: []string{"active model for default: openai:gpt-5.5", "is not ready: no OpenAI API key"},
		after: func(t *testing.T, r *readmeRun, _ string) {
			out, code := r.sh(t, "bin/astrid models current")
			if code != 0 || !strings.Contains(out, "openai:gpt-5.5\n") || !strings.Contains(out, "(chosen;") {
				t.Fatalf("models current: exit %d:\n%s", code, out)
			}
			out, code = r.sh(t, "bin/astrid models set openai:gpt-nope")
			if code != 1 || !strings.Contains(out, `unknown model "openai:gpt-nope"; openai offers openai:gpt-5.4-mini, openai:gpt-5.5`) ||
				!strings.Contains(out, "astrid models list") {
				t.Fatalf("models set of a model no provider offers: exit %d:\n%s", code, out)
			}
			if out, code := r.sh(t, "bin/astrid models unset"); code != 0 {
				t.Fatalf("models unset: exit %d:\n%s", code, out)
			}
		},
	},
	`OPENAI_BASE_URL=http://localhost:11434/v1 bin/astrid -p "What does README.md say?" --provider openai --model llama3.2`: {
		why: "needs Ollama: the URL is a local server replaying OpenAI's wire format",
		rewrite: func(r *readmeRun, l string) string {
			return strings.ReplaceAll(l, "http://localhost:11434", r.openai.URL)
		},
		want: []string{"It holds a README."},
	},
	`printf %s sk-… | bin/astrid capsule env set astrid-capsule-openai api_key && bin/astrid -p "…" --provider openai`: {
		why:  "needs OpenAI: OPENAI_BASE_URL points at a local server replaying its wire format, which checks the stored key",
		env:  func(r *readmeRun) []string { return []string{"OPENAI_BASE_URL=" + r.openai.URL + "/v1"} },
		want: []string{"It holds a README."},
		after: func(t *testing.T, r *readmeRun, _ string) {
			auth := r.openaiAuth()
			if len(auth) == 0 || auth[len(auth)-1] != "Bearer sk-…" {
				t.Fatalf("the stored key did not reach the server: %q", auth)
			}
		},
	},
	`bin/astrid sandbox check`:      {want: []string{"Landlock"}},
	`bin/astrid capsule show hello`: {want: []string{"hello: Greets someone by name", "GREETING: stored"}},
	`bin/astrid capsule tree`:       {want: []string{"no imports, no dependents:", "hello"}},
	`bin/astrid config show`:        {want: []string{"call_deadline = \"5m\"", "# default"}},
	`bin/astrid doctor`: {
		why:  "this machine cannot reach api.openai.com, where the key stored above would make doctor knock: the fake OpenAI server stands in",
		env:  func(r *readmeRun) []string { return []string{"OPENAI_BASE_URL=" + r.openai.URL + "/v1"} },
		want: []string{"openai: http://127.0.0.1", "no problems found"},
	},
	`bin/astrid gc --dry-run`:                                    {want: []string{"would remove 0 sessions"}},
	`bin/astrid capsule new weather`:                             {want: []string{"wrote the wasm capsule weather"}},
	`bin/astrid restart`:                                         {want: []string{"astrid daemon restarted (pid "}},
	`bin/astrid tool list`:                                       {want: []string{"read_file", "write_file", "run_shell_command"}},
	`bin/astrid tool call read_file '{"file_path":"README.md"}'`: {want: []string{"# Astrid in Go"}},
	`bin/astrid tool call grep_search '{"pattern":"TODO"}' --workspace ~/project --timeout 10s`: {
		want: []string{"plan.txt:1:TODO: write the plan"},
	},
	`bin/astrid tool call write_file @args.json`: {
		why:  "no terminal to ask on here: denied as the README says (prompt_tmux_test answers in one)",
		code: 1,
		want: []string{"denied write_file", "pass --yes"},
	},
	`bin/astrid tool call fetch_url '{"url":"https://go.dev/doc/"}'`: {
		why: "needs the internet: the URL is a local server, which config.toml's [egress] allow names",
		rewrite: func(r *readmeRun, l string) string {
			return strings.ReplaceAll(l, "https://go.dev/doc/", r.web.URL+"/doc/")
		},
		want: []string{"Status: 200", "# Documentation"},
		after: func(t *testing.T, r *readmeRun, _ string) {
			// bin/astrid init, later, writes a new one.
			if err := os.Remove(filepath.Join(r.astridHome, "config.toml")); err != nil {
				t.Fatal(err)
			}
		},
	},
	`bin/astrid tool call run_shell_command '{"command":"go test ./..."}'`: {
		why:  "no terminal to ask on here: denied as the README says (prompt_tmux_test answers in one)",
		code: 1,
		want: []string{"denied go test ./...", "pass --yes"},
	},
	`bin/astrid capsule check path/to/capsule`: {want: []string{"hello 0.1.0", "loads (0 errors"}},
	`bin/astrid capsule build examples/hello`:  {want: []string{"hello.wasm", "sha256:"}},
	`bin/astrid capsule install examples/hello`: {
		why:     "no terminal to confirm on here: --yes, as the README says for scripts (capsule_install_tmux_test answers in one)",
		rewrite: func(_ *readmeRun, l string) string { return l + " --yes" },
		want:    []string{"tools:        greet", "capsule hello installed"},
	},
	`echo "Howdy" | bin/astrid capsule env set hello GREETING`: {want: []string{"value GREETING of capsule hello stored"}},
	`bin/astrid capsule list`:                                  {want: []string{"hello", "wasm,static    ready"}},
	`bin/astrid tool call greet '{"name":"Ada"}'`:              {want: []string{"Howdy, Ada!"}},
	`bin/astrid capsule remove hello`:                          {want: []string{"removed", "capsules/hello"}},
	`bin/astrid init`:                                          {want: []string{"wrote", "config.toml"}},
	`bin/astrid start`:                                         {want: []string{"astrid daemon started (pid "}}, // stopped by the run's cleanup if need be
	`bin/astrid status`:                                        {want: []string{"astrid daemon: running, pid", "astrid-capsule-fs"}},
	`bin/astrid ui`:                                            {want: []string{"http://127.0.0.1:", "?token="}},
	`kill -HUP $(cat ~/.astrid/run/astrid.pid)`: {
		after: func(t *testing.T, r *readmeRun, _ string) {
			// Reloaded, still serving.
			if out, code := r.sh(t, "bin/astrid tool call read_file '{\"file_path\":\"README.md\"}'"); code != 0 || !strings.Contains(out, "# Astrid in Go") {
				t.Fatalf("after SIGHUP: exit %d:\n%s", code, out)
			}
		},
	},
	`bin/astrid logs -f --capsule astrid-uplink`: {
		why: "follows until interrupted: read until the uplink's lines show, then Ctrl-C",
		run: func(t *testing.T, r *readmeRun, line string) {
			r.until(t, line, "uplink: listening on unix:", syscall.SIGINT)
		},
	},
	`bin/astrid stop`:   {want: []string{"astrid daemon stopped (pid "}},
	`bin/astrid daemon`: {why: "runs until stopped: started, served a command, stopped with astrid stop", run: readmeForeground},
	`bin/astrid daemon --nats-listen 0.0.0.0:6222 --nats-routes nats-route://other-host:6222 --nats-cluster-secret-file cluster.secret`: {
		why: "runs until stopped, and port 6222 may be taken: listens on a free loopback port (other-host stays unreachable); " +
			"started, served a command, stopped with astrid stop",
		rewrite: func(r *readmeRun, l string) string {
			return strings.Replace(l, "0.0.0.0:6222", "127.0.0.1:"+freePort(r), 1)
		},
		run: readmeForeground,
	},
}

// The README's examples, each run against the real binary in the order the
// README gives them (they build on each other: the session of the first, the
// capsule built then installed, the daemon started then stopped). Run as
// written unless readmeRows says otherwise, with bin/astrid this binary and
// $HOME a directory of the test's (so ~/.astrid is its $ASTRID_HOME).
func TestReadmeExamples(t *testing.T) {
	// Parallel: among the longest of a race run (wasm compiled by a
	// race-instrumented kernel, builds), and it changes no process-wide state.
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a wasm capsule and runs about forty processes")
	}
	lines := readmeExamples(t, filepath.Join("..", "..", "README.md"))
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	for l, row := range readmeRows {
		if !seen[l] {
			t.Errorf("readmeRows has a row for %q, which README.md no longer holds", l)
		}
		if (row.rewrite != nil || row.run != nil || row.skip != "" || row.env != nil) && row.why == "" && row.skip == "" {
			t.Errorf("the row for %q changes how it runs without saying why", l)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	r := newReadmeRun(t)
	for i, line := range lines {
		row := readmeRows[line]
		name := fmt.Sprintf("%02d %s", i+1, line)
		if row.skip != "" {
			t.Logf("%s: skipped: %s", name, row.skip)
			continue
		}
		ok := t.Run(name, func(t *testing.T) {
			run := line
			if row.rewrite != nil {
				run = row.rewrite(r, line)
			}
			if row.run != nil {
				row.run(t, r, run)
				return
			}
			var extra []string
			if row.env != nil {
				extra = row.env(r)
			}
			out, code := r.sh(t, run, extra...)
			if code != row.code {
				t.Fatalf("%s: exit %d, want %d:\n%s", run, code, row.code, out)
			}
			for _, w := range row.want {
				if !strings.Contains(out, w) {
					t.Fatalf("%s: the output lacks %q:\n%s", run, w, out)
				}
			}
			if row.after != nil {
				row.after(t, r, out)
			}
		})
		if !ok {
			t.Fatalf("example %d failed; the later ones build on it", i+1)
		}
	}
}

// readmeExamples are the lines of path's sh code blocks that run
// bin/astrid or act on ~/.astrid, each without its comment and surrounding
// space.
func readmeExamples(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && strings.TrimSpace(strings.TrimPrefix(l, "```")) == "sh"
		case in:
			if l = strings.TrimSpace(stripShellComment(l)); strings.Contains(l, "bin/astrid") || strings.Contains(l, "~/.astrid/") {
				out = append(out, l)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("found only %d examples in %s", len(out), path)
	}
	return out
}

// stripShellComment cuts l at a # that starts a shell comment (at the
// start or after a blank, outside quotes).
func stripShellComment(l string) string {
	var quote rune
	for i, c := range l {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i]
		}
	}
	return l
}

func newReadmeRun(t *testing.T) *readmeRun {
	t.Helper()
	testutil.NeedCommand(t, "git")
	r := &readmeRun{home: t.TempDir(), ws: t.TempDir()}
	r.astridHome = filepath.Join(r.home, ".astrid")
	// The environment: this one without what would steer astrid elsewhere,
	// and the Go toolchain's caches (capsule build) where they were.
	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(goEnv)), "\n")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "GOCACHE" || k == "GOMODCACHE" || k == "GOPATH" || strings.HasPrefix(k, "ASTRID_") ||
			strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") {
			continue
		}
		r.env = append(r.env, kv)
	}
	r.env = append(r.env, "HOME="+r.home, "ASTRID_TEST_RUN_MAIN=1", "GOCACHE="+vals[0], "GOMODCACHE="+vals[1], "GOPATH="+vals[2])

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	hello := filepath.Join("..", "..", "examples", "hello")
	files := map[string]string{
		"README.md":    string(readme),
		"question.txt": "What does README.md say?\n",
		"args.json":    `{"file_path":"notes.md","content":"written by write_file\n"}`,
		// capsule build needs a module around the capsule (the repository is
		// one; here it is the capsule's own).
		"examples/hello/go.mod":        "module example.com/hello\n\ngo 1.26\n\nrequire github.com/astrid-go/astrid v0.0.0\n",
		"examples/hello/hello.go":      readFile(t, filepath.Join(hello, "hello.go")),
		"examples/hello/Capsule.toml":  readFile(t, filepath.Join(hello, "Capsule.toml")),
		"path/to/capsule/Capsule.toml": readFile(t, filepath.Join(hello, "Capsule.toml")),
		// What the README's openssl line makes (it runs no bin/astrid).
		"cluster.secret": "6f1d0c7e2b9a4d8f3e5a1c7b9d2f4e6a8c0b1d3f5e7a9c2b4d6f8e0a1c3b5d7f\n",
	}
	for name, body := range files {
		p := filepath.Join(r.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(r.home, "project"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.home, "project", "plan.txt"), []byte("TODO: write the plan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// bin/astrid is this test binary (TestMain runs astrid's main).
	if err := os.MkdirAll(filepath.Join(r.ws, "bin"), 0o700); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(r.ws, "bin", "astrid")); err != nil {
		t.Fatal(err)
	}
	// A repository with a change, for git diff.
	for _, args := range [][]string{{"init", "-q"}, {"add", "README.md"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "readme"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = r.ws, r.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(r.ws, "README.md"), append(readme, "\nOne more line.\n"...), 0o600); err != nil {
		t.Fatal(err)
	}

	r.openai, r.openaiAuth = readmeOpenAI(t)
	r.anthropic, _, _ = anthropicServer(t)
	r.web = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body><h1>Documentation</h1><p>The Go docs.</p></body></html>")
	}))
	t.Cleanup(r.web.Close)
	if err := os.MkdirAll(r.astridHome, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[egress]\nallow = [%q]\n", strings.TrimPrefix(r.web.URL, "http://"))
	if err := os.WriteFile(filepath.Join(r.astridHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.stopDaemon(t) })
	return r
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readmeOpenAI is an OpenAI-compatible server as Ollama is one: GET
// /v1/models lists llama3.2; a chat completion streams "It holds a
// README." It keeps each chat request's Authorization header.
func readmeOpenAI(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"llama3.2","object":"model","created":1764590000,"owned_by":"library"}]}`)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, openAIChunk(`{"role":"assistant","content":"It holds "}`, "null"))
		_, _ = io.WriteString(w, openAIChunk(`{"content":"a README."}`, "null"))
		_, _ = io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), auth...)
	}
}

// command is line as bash runs it in the workspace, with extra in its
// environment.
func (r *readmeRun) command(ctx context.Context, line string, extra ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = r.ws
	cmd.Env = append(append([]string(nil), r.env...), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// sh runs line to its end (bounded by daemonPatience) and returns its
// output, standard error included, and exit status.
func (r *readmeRun) sh(t *testing.T, line string, extra ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	cmd := r.command(ctx, line, extra...)
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %v:\n%s", line, daemonPatience, out)
	}
	return string(out), exitStatus(t, err)
}

// until starts line, waits until its output shows want, then sends it sig
// and expects it to end.
func (r *readmeRun) until(t *testing.T, line, want string, sig syscall.Signal) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	cmd := r.command(ctx, line)
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, daemonPatience, fmt.Sprintf("%q in the output of %s", want, line), func() bool { return strings.Contains(out.String(), want) })
	// The whole group: bash and astrid under it.
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("%s: did not end on %v:\n%s", line, sig, out.String())
	}
	if code := exitStatus(t, err); code != 0 && code != 130 {
		t.Fatalf("%s: exit %d on %v:\n%s", line, code, sig, out.String())
	}
	return out.String()
}

// stopDaemon stops a daemon still running on the run's home.
func (r *readmeRun) stopDaemon(t *testing.T) {
	if _, err := daemon.Running(r.astridHome); err == nil {
		if out, code := r.sh(t, "bin/astrid stop"); code != 0 && !strings.Contains(out, "no daemon runs") {
			t.Errorf("stop the daemon: exit %d: %s", code, out)
		}
	}
}

// readmeForeground runs a foreground daemon line: once it serves a
// command, astrid stop ends it, and it exits 0.
func readmeForeground(t *testing.T, r *readmeRun, line string) {
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	cmd := r.command(ctx, line)
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	testutil.WaitFor(t, daemonPatience, "the foreground daemon to run", func() bool {
		select {
		case err := <-done:
			t.Fatalf("%s ended before it served: %v\n%s", line, err, out.String())
		default:
		}
		// The pid file is its readiness signal.
		b, err := os.ReadFile(filepath.Join(r.astridHome, "run", "astrid.pid"))
		return err == nil && len(b) > 0
	})
	if s, code := r.sh(t, "bin/astrid status"); code != 0 || !strings.Contains(s, "astrid daemon: running") {
		t.Fatalf("status of the foreground daemon: exit %d:\n%s", code, s)
	}
	if s, code := r.sh(t, "bin/astrid stop"); code != 0 || !strings.Contains(s, "astrid daemon stopped") {
		t.Fatalf("stop: exit %d:\n%s", code, s)
	}
	if err := <-done; err != nil || ctx.Err() != nil {
		t.Fatalf("%s: %v\n%s", line, err, out.String())
	}
	if !strings.Contains(out.String(), "daemon stopped") {
		t.Fatalf("%s: its log lacks the stop:\n%s", line, out.String())
	}
}

// readmeChat runs astrid chat in a terminal: it opens (starting a daemon),
// and two Ctrl-C leave it with status 0; the daemon is stopped after.
func readmeChat(t *testing.T, r *readmeRun, line string) {
	term := newTerminal(t)
	var env strings.Builder
	env.WriteString("env -i")
	for _, kv := range r.env {
		env.WriteString(" '" + strings.ReplaceAll(kv, "'", `'\''`) + "'")
	}
	term.start("cd '" + r.ws + "' && " + env.String() + " bash -c '" + strings.ReplaceAll(line, "'", `'\''`) + "'; echo EXIT=$?; sleep 60")
	term.waitFor("/help")
	term.run("send-keys", "C-c")
	term.run("send-keys", "C-c")
	if screen := term.waitFor("EXIT="); !strings.Contains(screen, "EXIT=0") {
		t.Fatalf("chat did not leave with status 0:\n%s", screen)
	}
	r.stopDaemon(t)
}

// freePort is a loopback TCP port free a moment ago.
func freePort(_ *readmeRun) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "16222"
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}
