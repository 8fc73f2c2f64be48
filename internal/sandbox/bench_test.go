//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// What confinement costs (issue 28, "Show"; BENCHMARKS.md, "Confinement
// (issue 28)"): the start-up of a confined `true` against an unconfined one
// (goal: p50 ≤ 5 ms added), and a confined `go build` of a small module
// against an unconfined one with the same warm GOCACHE (goal: ≤ 1.1×).
// Each has an interleaved sub-benchmark that takes turns, one confined run
// then one unconfined, so that a machine whose speed drifts during the run
// weighs on both alike; its metrics are the figures of record.
//
//	go test -run '^$' -bench 'StartTrue|GoBuild' -count 5 ./internal/sandbox/

// starter starts cmd, confined or not; release follows Wait.
type starter func(cmd *exec.Cmd) (release func(), err error)

func unconfined(cmd *exec.Cmd) (func(), error) { return func() {}, cmd.Start() }

func confinedBy(p Policy) starter {
	return func(cmd *exec.Cmd) (func(), error) { return Start(cmd, p) }
}

// runOnce starts, waits for and releases the command mk makes, and says
// how long that took.
func runOnce(b *testing.B, mk func() *exec.Cmd, start starter) time.Duration {
	d, _ := runCPU(b, mk, start)
	return d
}

// runCPU is runOnce that also says how much CPU the command's whole tree
// used (user + system, its waited-for descendants included): a figure the
// machine's load moves much less than the wall clock.
func runCPU(b *testing.B, mk func() *exec.Cmd, start starter) (wall, cpu time.Duration) {
	cmd := mk()
	t0 := time.Now()
	release, err := start(cmd)
	if err != nil {
		b.Fatal(err)
	}
	err = cmd.Wait()
	release()
	d := time.Since(t0)
	if err != nil {
		b.Fatalf("%s: %v", cmd, err)
	}
	return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func BenchmarkStartTrue(b *testing.B) {
	needConfinement(b)
	truePath, ok := lookSystem("true", systemPATH)
	if !ok {
		b.Skip("no true(1) in " + systemPATH)
	}
	mk := func() *exec.Cmd { return exec.Command(truePath) }
	p := Policy{Read: DefaultSystemRead, Write: []string{b.TempDir()}, Devices: DefaultDevices}
	for _, v := range []struct {
		name  string
		start starter
	}{{"unconfined", unconfined}, {"confined", confinedBy(p)}} {
		b.Run(v.name, func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				ds = append(ds, runOnce(b, mk, v.start))
			}
			b.ReportMetric(us(p50(ds)), "p50-µs")
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var off, on []time.Duration
		for i := 0; i < b.N; i++ {
			// Which goes first alternates, so neither always follows
			// the other's leftovers.
			if i%2 == 0 {
				on = append(on, runOnce(b, mk, confinedBy(p)))
				off = append(off, runOnce(b, mk, unconfined))
			} else {
				off = append(off, runOnce(b, mk, unconfined))
				on = append(on, runOnce(b, mk, confinedBy(p)))
			}
		}
		b.ReportMetric(us(p50(off)), "p50-unconfined-µs")
		b.ReportMetric(us(p50(on)), "p50-confined-µs")
		b.ReportMetric(us(p50(on)-p50(off)), "p50-added-µs")
	})
}

func BenchmarkGoBuild(b *testing.B) {
	needConfinement(b)
	goPath, ok := lookSystem("go", confinedPATH())
	if !ok {
		b.Skip("go is not installed")
	}
	ws, priv, cache := b.TempDir(), b.TempDir(), b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/bench\n\ngo 1.22\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	// Every build compiles the main package anew (its source changes) and
	// links; the standard library comes from the shared, warm GOCACHE.
	gen := 0
	edit := func() {
		gen++
		src := fmt.Sprintf("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n)\n\nconst gen = %d\n\nfunc main() {\n\tfmt.Fprintln(os.Stdout, strings.Repeat(\"x\", gen%%7), gen)\n}\n", gen)
		if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + confinedPATH(), "HOME=" + priv, "TMPDIR=" + priv, "LANG=C.UTF-8",
		"GOCACHE=" + cache, "GOPATH=" + filepath.Join(priv, "gopath"),
		"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off", "GOTELEMETRY=off",
	}
	mk := func() *exec.Cmd {
		cmd := exec.Command(goPath, "build", "-o", filepath.Join(ws, "prog"), ".")
		cmd.Dir, cmd.Env = ws, env
		return cmd
	}
	read := append([]string(nil), DefaultSystemRead...)
	if d := goDir(); !grantedRead(d) {
		read = append(read, filepath.Dir(d))
	}
	p := Policy{Read: read, Write: []string{ws, priv, cache}, Devices: DefaultDevices}
	// Warm the cache, confined and not, before anything is timed.
	edit()
	runOnce(b, mk, unconfined)
	edit()
	runOnce(b, mk, confinedBy(p))

	for _, v := range []struct {
		name  string
		start starter
	}{{"unconfined", unconfined}, {"confined", confinedBy(p)}} {
		b.Run(v.name, func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				edit()
				b.StartTimer()
				total += runOnce(b, mk, v.start)
			}
			b.ReportMetric(float64(total)/float64(b.N)/1e6, "ms/build")
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var off, on, offCPU, onCPU []time.Duration
		build := func(start starter, wall, cpu *[]time.Duration) {
			b.StopTimer()
			edit()
			b.StartTimer()
			w, c := runCPU(b, mk, start)
			*wall, *cpu = append(*wall, w), append(*cpu, c)
		}
		for i := 0; i < b.N; i++ {
			// Which goes first alternates (see StartTrue).
			if i%2 == 0 {
				build(confinedBy(p), &on, &onCPU)
				build(unconfined, &off, &offCPU)
			} else {
				build(unconfined, &off, &offCPU)
				build(confinedBy(p), &on, &onCPU)
			}
		}
		b.ReportMetric(float64(p50(off))/1e6, "p50-unconfined-ms")
		b.ReportMetric(float64(p50(on))/1e6, "p50-confined-ms")
		b.ReportMetric(float64(p50(on))/float64(p50(off)), "ratio")
		b.ReportMetric(float64(p50(onCPU))/float64(p50(offCPU)), "cpu-ratio")
	})
}
