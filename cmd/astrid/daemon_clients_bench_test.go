package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// concurrentClients is issue 19's load: this many clients connected to one
// daemon at once, each running a replayed turn.
const concurrentClients = 100

// benchQueueDepth is the benchmark daemon's [limits] queue_depth: room for
// every event of a round's 100 turns at the agent at once.
const benchQueueDepth = 1024

// BenchmarkDaemonConcurrentTurns is issue 19's concurrency benchmark: a
// daemon process (astrid start, [limits] queue_depth = 1024) with 100 clients
// connected over its socket; one op is a round in which every client runs
// one replayed turn without tools (a fresh session each) at the same time.
// Every turn must be answered with the script's text, or the benchmark
// fails. It reports the p50 and p99 of one turn, from the prompt to its
// final response, as a client sees it under that load, and the round's
// time (ns/op). BENCH_CLIENTS=n runs it with n clients instead (how it
// scales). Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench DaemonConcurrentTurns -benchtime 5x -count 3 ./cmd/astrid/
func BenchmarkDaemonConcurrentTurns(b *testing.B) {
	home, ws, run := replayBenchHome(b)
	// All the clients act as one principal (one uid), so every turn's
	// prompt and stream events queue at the agent (react) as calls of
	// that one principal: a burst of 100 turns is about 600 of them, while
	// [limits] queue_depth (64 by default) bounds them, dropping the rest
	// (docs/rationale/daemon.md, "Why may 128 clients connect, and what does a
	// burst of one principal's turns meet?").
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(fmt.Sprintf("[limits]\nqueue_depth = %d\n", benchQueueDepth)), 0o600); err != nil {
		b.Fatal(err)
	}
	// The agent's own bound on one principal's running turns (32 by
	// default, half the default depth) goes up with the depth: the
	// benchmark has every one of its turns taken at once.
	run(strconv.Itoa(benchQueueDepth/2), "capsule", "env", "set", "astrid-capsule-react", "max_turns_in_flight")
	run("", "start", "--workspace", ws)
	b.Cleanup(func() { run("", "stop") })

	n := concurrentClients
	if v, err := strconv.Atoi(os.Getenv("BENCH_CLIENTS")); err == nil {
		n = v
	}
	clients := make([]*daemonclient.Client, n)
	for i := range clients {
		c, err := daemonclient.Dial(context.Background(), home, daemonclient.Options{Client: fmt.Sprintf("bench %d", i), Timeout: time.Minute})
		if err != nil {
			b.Fatalf("client %d of %d: %v", i+1, concurrentClients, err)
		}
		defer c.Close()
		clients[i] = c
	}
	turn := func(c *daemonclient.Client) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		resp, err := agentclient.Run(ctx, c, agentclient.Prompt{Text: "plain", SessionID: agentclient.NewSessionID()}, nil)
		took := time.Since(start)
		if err != nil {
			return took, err
		}
		if resp.Text != "Just an answer." {
			return took, fmt.Errorf("answered %+v", resp)
		}
		return took, nil
	}
	round := func() []time.Duration { return concurrentTurns(b, home, clients, turn) }
	round() // warm up: every client's first turn
	var samples []time.Duration
	b.ResetTimer()
	for range b.N {
		samples = append(samples, round()...)
	}
	b.StopTimer()
	testutil.ReportLatency(b, samples, "turn-")
	b.ReportMetric(float64(len(samples))/b.Elapsed().Seconds(), "turns/s")
	// What the socket carried per turn (the live status's count, warm-up
	// round included): it grows with the clients of one principal, as
	// each receives every turn's events.
	var st daemon.Status
	if err := clients[0].Query(uplinkwire.QueryStatus, &st); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Principals["default"].BytesOut)/float64(len(samples)+len(clients)), "socket-out-B/turn")
}

// concurrentTurns runs one turn on each client at once and returns their
// latencies; a turn not answered fails the benchmark with the daemon's
// warnings.
func concurrentTurns(b *testing.B, home string, clients []*daemonclient.Client, turn func(*daemonclient.Client) (time.Duration, error)) []time.Duration {
	b.Helper()
	lat := make([]time.Duration, len(clients))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat[i], errs[i] = turn(c)
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	for i, err := range errs {
		if err != nil {
			b.Fatalf("%d of %d turns not answered; client %d's: %v\nthe daemon's warnings:\n%s", failed, len(errs), i+1, err, daemonWarnings(home))
		}
	}
	return lat
}

// daemonWarnings is the warnings and errors of the daemon's log of home.
func daemonWarnings(home string) string {
	b, _ := os.ReadFile(filepath.Join(home, "logs", "daemon.log"))
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, line)
		}
	}
	if len(out) > 40 {
		out = append(out[:40], fmt.Sprintf("… and %d more", len(out)-40))
	}
	return strings.Join(out, "\n")
}
