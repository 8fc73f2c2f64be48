package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
)

// BenchmarkPromptProcess is issue 16's process benchmark: `astrid -p` for a
// replayed turn without tools, from exec to exit, with warm caches (the
// binary built once, $ASTRID_HOME made by a first run). Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench PromptProcess -count 5 ./cmd/astrid/
func BenchmarkPromptProcess(b *testing.B) {
	_, _, run := replayBenchHome(b)
	run("", "-p", "plain")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run("", "-p", "plain")
	}
}

// BenchmarkPromptProcessDaemon is issue 19's client benchmark: `astrid -p`
// for a replayed turn without tools against a running daemon (astrid
// start), from exec to exit; target ≤ 30 ms. Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench PromptProcessDaemon -count 5 ./cmd/astrid/
func BenchmarkPromptProcessDaemon(b *testing.B) {
	_, ws, run := replayBenchHome(b)
	run("", "start", "--workspace", ws)
	b.Cleanup(func() { run("", "stop") })
	// Each client carries its workspace (its current directory) and the
	// provider settings of its environment on its hello (issue 29).
	// A provider setting makes its provider ready, so the turn names
	// the replay provider (as in-process, the registry would choose the
	// configured one).
	b.Setenv("OPENAI_API_KEY", "sk-bench-not-used")
	b.Setenv("ANTHROPIC_API_KEY", "sk-ant-bench-not-used")
	if out := run("", "-p", "plain", "--provider", "replay"); !strings.Contains(out, "Just an answer.") {
		b.Fatalf("-p through the daemon: %s", out)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run("", "-p", "plain", "--provider", "replay")
	}
}

// replayBenchHome builds the astrid binary and makes a fresh $ASTRID_HOME
// whose replay provider plays plainScript, and a workspace; run runs the
// binary there (stdin, if not empty, as its input) and returns its output,
// failing the benchmark on a non-zero exit.
func replayBenchHome(b *testing.B) (home, ws string, run func(stdin string, args ...string) string) {
	b.Helper()
	dir := b.TempDir()
	bin := buildAstrid(b)
	home, ws = filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(ws, "script.jsonl")
	if err := os.WriteFile(script, []byte(plainScript), 0o600); err != nil {
		b.Fatal(err)
	}
	run = func(stdin string, args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("astrid %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run(script, "capsule", "env", "set", "astrid-capsule-replay", "script")
	return home, ws, run
}
