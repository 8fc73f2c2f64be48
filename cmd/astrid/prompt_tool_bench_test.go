package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// toolTurnAnswer is what fakeToolModel's second answer says.
const toolTurnAnswer = "It holds a README."

// fakeToolModel is issue 38's fake OpenAI-compatible server: a request
// without a tool result is answered with one read_file call of README.md,
// one with a tool result with a short answer. It keeps no state, so any
// number of turns may run on it at once.
func fakeToolModel(b *testing.B) string {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if !strings.Contains(string(body), `"role":"tool"`) {
			io.WriteString(w, openAIChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"read_file","arguments":"{\"file_path\":\"README.md\"}"}}]}`, "null"))
			io.WriteString(w, openAIChunk(`{}`, `"tool_calls"`))
		} else {
			io.WriteString(w, openAIChunk(`{"role":"assistant","content":"It holds "}`, "null"))
			io.WriteString(w, openAIChunk(`{"content":"a README."}`, "null"))
			io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// toolBenchHome builds the binary, makes a home and a workspace holding
// README.md, and returns the environment every process runs with (the
// home, the fake model's URL and a key).
func toolBenchHome(b *testing.B) (bin, home, ws string, env []string) {
	b.Helper()
	dir := b.TempDir()
	// ASTRID_BENCH_BIN runs a binary built elsewhere (another commit's,
	// for an interleaved A/B from one test binary).
	if bin = os.Getenv("ASTRID_BENCH_BIN"); bin == "" {
		bin = buildAstrid(b)
	}
	home, ws = filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	for _, d := range []string{home, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# Demo workspace\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	env = append(os.Environ(), config.HomeEnv+"="+home, "OPENAI_BASE_URL="+fakeToolModel(b), "OPENAI_API_KEY=sk-bench")
	return bin, home, ws, env
}

// procRun is one process's exec-to-exit figures.
type procRun struct {
	wall, cpu time.Duration
	rssKiB    int64
}

// procRunSource is a small program that runs its arguments as a command
// and writes the child's wall time, CPU and peak RSS to $PROCRUN_OUT. The
// peak RSS of a child the test process starts itself would read as the
// test process's own: Go starts children with vfork, and Linux carries the
// parent's peak into the child's at exec. This helper's own peak (a few
// MiB) is what carries over instead, below any astrid process's.
const procRunSource = `package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if werr := os.WriteFile(os.Getenv("PROCRUN_OUT"), []byte(fmt.Sprintf("%d %d %d", wall.Nanoseconds(), cpu.Nanoseconds(), ru.Maxrss)), 0o600); werr != nil {
		fmt.Fprintln(os.Stderr, werr)
		os.Exit(1)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
`

// buildProcRun builds procRunSource and returns its path.
func buildProcRun(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(procRunSource), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module procrun\n\ngo 1.22\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "procrun")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build procrun: %v\n%s", err, out)
	}
	return bin
}

// runProc runs bin with args in ws under env through the procrun helper,
// fails b unless it exits 0 with want in its standard output, and returns
// its figures.
func runProc(b *testing.B, procrun, bin, ws string, env []string, want string, args ...string) procRun {
	b.Helper()
	stats := filepath.Join(b.TempDir(), "stats")
	cmd := exec.Command(procrun, append([]string{bin}, args...)...)
	cmd.Dir, cmd.Env = ws, append(env, "PROCRUN_OUT="+stats)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil || !strings.Contains(out.String(), want) {
		b.Fatalf("astrid %v: %v\nstdout %q\nstderr:\n%s", args, err, out.String(), errOut.String())
	}
	data, err := os.ReadFile(stats)
	if err != nil {
		b.Fatal(err)
	}
	var wall, cpu, rss int64
	if _, err := fmt.Sscan(string(data), &wall, &cpu, &rss); err != nil {
		b.Fatalf("procrun's figures %q: %v", data, err)
	}
	return procRun{wall: time.Duration(wall), cpu: time.Duration(cpu), rssKiB: rss}
}

// reportProc reports the median wall time, CPU and peak RSS of runs, and
// the p90 wall time, under prefix.
func reportProc(b *testing.B, prefix string, runs []procRun) {
	walls, cpus, rss := make([]time.Duration, len(runs)), make([]time.Duration, len(runs)), make([]time.Duration, len(runs))
	for i, r := range runs {
		walls[i], cpus[i], rss[i] = r.wall, r.cpu, time.Duration(r.rssKiB)
	}
	b.ReportMetric(float64(testutil.Quantile(walls, 0.5).Microseconds())/1000, prefix+"wall-p50-ms")
	b.ReportMetric(float64(testutil.Quantile(walls, 0.9).Microseconds())/1000, prefix+"wall-p90-ms")
	b.ReportMetric(float64(testutil.Quantile(cpus, 0.5).Microseconds())/1000, prefix+"cpu-p50-ms")
	b.ReportMetric(float64(testutil.Quantile(rss, 0.5))/1024, prefix+"rss-p50-MiB")
}

// BenchmarkPromptToolTurnProcess is issue 38's whole-process figure: `astrid
// -p` for a one-tool turn (the model asks for read_file, then answers) on
// the fake model server, exec to exit, through a running daemon and
// in-process (--no-daemon), the two taking turns; and `astrid --version`
// beside them. It reports each one's median and p90 wall time, its median
// CPU (user + system) and its median peak RSS. Goals: the daemon turn
// ≤ 15 ms, ≤ 5 ms of CPU, ≤ 15 MiB; in-process ≤ 30 ms; --version ≤ 5 ms.
// Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench PromptToolTurnProcess -benchtime 30x -count 3 ./cmd/astrid/
func BenchmarkPromptToolTurnProcess(b *testing.B) {
	bin, _, ws, env := toolBenchHome(b)
	procrun := buildProcRun(b)
	run := func(want string, args ...string) procRun { return runProc(b, procrun, bin, ws, env, want, args...) }
	run("", "start", "--workspace", ws)
	b.Cleanup(func() { run("", "stop") })
	prompt := []string{"-p", "What is in README.md?", "--provider", "openai", "--model", "fake-model"}
	// Warm up both paths (the in-process one makes its caches).
	run(toolTurnAnswer, prompt...)
	run(toolTurnAnswer, append(prompt, "--no-daemon")...)
	var daemon, local, version []procRun
	b.ResetTimer()
	for range b.N {
		daemon = append(daemon, run(toolTurnAnswer, prompt...))
		local = append(local, run(toolTurnAnswer, append(prompt, "--no-daemon")...))
		version = append(version, run("astrid ", "--version"))
	}
	b.StopTimer()
	reportProc(b, "daemon-", daemon)
	reportProc(b, "inproc-", local)
	reportProc(b, "version-", version)
}

// BenchmarkDaemonConcurrentToolTurns is issue 38's throughput figure: 100
// clients of one daemon process (astrid start, [limits] queue_depth = 1024)
// each run a one-tool turn on the fake model server at the same instant;
// one op is such a round. Every turn must come back with the model's
// answer, or the benchmark fails. It reports turns/s over the timed rounds
// and the p50 and p99 of one turn as its client sees it. BENCH_CLIENTS=n
// runs n clients. Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench DaemonConcurrentToolTurns -benchtime 5x -count 3 ./cmd/astrid/
func BenchmarkDaemonConcurrentToolTurns(b *testing.B) {
	bin, home, ws, env := toolBenchHome(b)
	run := func(stdin string, args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = ws, env
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("astrid %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(fmt.Sprintf("[limits]\nqueue_depth = %d\n", benchQueueDepth)), 0o600); err != nil {
		b.Fatal(err)
	}
	run(strconv.Itoa(benchQueueDepth/2), "capsule", "env", "set", "astrid-capsule-react", "max_turns_in_flight")
	run("", "start", "--workspace", ws)
	b.Cleanup(func() { run("", "stop") })

	n := concurrentClients
	if v, err := strconv.Atoi(os.Getenv("BENCH_CLIENTS")); err == nil {
		n = v
	}
	providerEnv := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && (k == "OPENAI_BASE_URL" || k == "OPENAI_API_KEY") {
			providerEnv[k] = v
		}
	}
	clients := make([]*daemonclient.Client, n)
	for i := range clients {
		c, err := daemonclient.Dial(context.Background(), home, daemonclient.Options{Client: fmt.Sprintf("bench %d", i), Workspace: ws, Env: providerEnv, Timeout: time.Minute})
		if err != nil {
			b.Fatalf("client %d of %d: %v", i+1, n, err)
		}
		defer c.Close()
		clients[i] = c
	}
	turn := func(c *daemonclient.Client) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		resp, err := agentclient.Run(ctx, c, agentclient.Prompt{
			Text: "What is in README.md?", SessionID: agentclient.NewSessionID(),
			Context: ipc.PromptContext{Provider: "openai", Model: "fake-model"},
		}, nil)
		took := time.Since(start)
		if err != nil {
			return took, err
		}
		if resp.Text != toolTurnAnswer {
			return took, fmt.Errorf("answered %+v", resp)
		}
		return took, nil
	}
	round := func() []time.Duration { return concurrentTurns(b, home, clients, turn) }
	pid, err := daemon.Running(home)
	if err != nil {
		b.Fatal(err)
	}
	round() // warm up: every client's first turn
	var samples []time.Duration
	cpu0, self0 := procCPU(b, pid), selfCPU()
	b.ResetTimer()
	for range b.N {
		samples = append(samples, round()...)
	}
	b.StopTimer()
	testutil.ReportLatency(b, samples, "turn-")
	b.ReportMetric(float64(len(samples))/b.Elapsed().Seconds(), "turns/s")
	// The daemon's own CPU per turn: what bounds turns/s on two cores
	// whatever else shares them (2 s of CPU a second ÷ this).
	b.ReportMetric(float64((procCPU(b, pid)-cpu0).Microseconds())/1000/float64(len(samples)), "daemon-cpu-ms/turn")
	// This process's: the 100 clients and the fake model server, which
	// share the two cores with the daemon.
	b.ReportMetric(float64((selfCPU()-self0).Microseconds())/1000/float64(len(samples)), "bench-cpu-ms/turn")
}

// selfCPU is the user and system CPU this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the user and system CPU pid has used, from /proc/<pid>/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's closing parenthesis; utime and
	// stime are the 14th and 15th of the line, in clock ticks (100 Hz).
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
