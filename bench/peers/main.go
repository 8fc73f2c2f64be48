package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// prompt is the one turn every agent runs.
const prompt = "What is in README.md? Read it with your tool, then answer in one sentence."

// runTimeout bounds one agent run.
const runTimeout = 120 * time.Second

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-procrun" {
		os.Exit(procrun(os.Args[2], os.Args[3:]))
	}
	rounds := flag.Int("rounds", 15, "interleaved rounds (each agent runs once a round)")
	astrid := flag.String("astrid", "", "the astrid binary (default: astrid on PATH)")
	only := flag.String("only", "", "comma-separated agent names to run (default: all installed)")
	flag.Parse()
	if err := run(*rounds, *astrid, *only); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

// sample is one run's exec-to-exit figures.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
	ok        bool
}

func run(rounds int, astridBin, only string) error {
	dir, err := os.MkdirTemp("", "astrid-peers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	readme := filepath.Join(ws, "README.md")
	if err := os.WriteFile(readme, []byte("# Demo workspace\n\nA README for the benchmark.\n"), 0o600); err != nil {
		return err
	}
	srv, fake := startFake(readme)
	defer srv.Close()
	if astridBin == "" {
		astridBin, _ = exec.LookPath("astrid")
	}
	agents := allAgents(srv.URL, dir, ws, astridBin)
	var active []*agent
	for _, a := range agents {
		if only != "" && !slices.Contains(strings.Split(only, ","), a.name) {
			continue
		}
		if a.bin == "" {
			fmt.Fprintf(os.Stderr, "peers: %-16s skipped: %s not installed (not on PATH)\n", a.name, a.binName)
			continue
		}
		if a.setup != nil {
			if err := a.setup(); err != nil {
				fmt.Fprintf(os.Stderr, "peers: %-16s skipped: setup: %v\n", a.name, err)
				continue
			}
		}
		if a.teardown != nil {
			defer a.teardown()
		}
		// A warm-up run (caches, a provider package fetched on first use).
		s, out := a.once(ws)
		if !s.ok {
			fmt.Fprintf(os.Stderr, "peers: %-16s skipped: its warm-up turn gave no answer:\n%s\n", a.name, tail(out, 1500))
			continue
		}
		active = append(active, a)
	}
	if len(active) == 0 {
		return fmt.Errorf("no agent to measure")
	}
	before := fake.requests.Load()
	for r := range rounds {
		for _, a := range active {
			s, out := a.once(ws)
			a.samples = append(a.samples, s)
			if !s.ok && a.failure == "" {
				a.failure = tail(out, 800)
			}
		}
		fmt.Fprintf(os.Stderr, "peers: round %d of %d\n", r+1, rounds)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%d interleaved rounds, %s, load average %s, fake server requests %d\n\n", rounds, time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.Join(strings.Fields(string(load))[:3], " "), fake.requests.Load()-before)
	fmt.Println("| agent | version | answered | wall min | wall p50 | wall p90 | CPU p50 | peak RSS p50 |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, a := range active {
		var walls, cpus, rss []float64
		ok := 0
		for _, s := range a.samples {
			if s.ok {
				ok++
			}
			walls = append(walls, ms(s.wall))
			cpus = append(cpus, ms(s.cpu))
			rss = append(rss, float64(s.rssKiB)/1024)
		}
		slices.Sort(walls)
		fmt.Printf("| %s | %s | %d/%d | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f MiB |\n", a.name, a.version(), ok, len(a.samples),
			walls[0], quantile(walls, 0.5), quantile(walls, 0.9), quantile(cpus, 0.5), quantile(rss, 0.5))
	}
	for _, a := range active {
		if a.failure != "" {
			fmt.Printf("\n%s's first failed run ended:\n```\n%s\n```\n", a.name, a.failure)
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// quantile is the q-quantile of v (nearest rank), sorting a copy.
func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(q*float64(len(s)) + 0.5)
	return s[min(max(i-1, 0), len(s)-1)]
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// procrun is the helper mode: it runs args, then writes the child's wall
// time, CPU and peak RSS to out. Measuring through this small helper keeps
// the benchmark's own peak RSS out of the child's (Go starts children with
// vfork, and Linux carries the parent's peak into the child's at exec).
func procrun(out string, args []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if werr := os.WriteFile(out, []byte(fmt.Sprintf("%d %d %d", wall.Nanoseconds(), cpu.Nanoseconds(), ru.Maxrss)), 0o600); werr != nil {
		fmt.Fprintln(os.Stderr, werr)
		return 1
	}
	return cmd.ProcessState.ExitCode()
}
