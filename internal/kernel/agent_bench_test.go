package kernel

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// fiveReadsScript is a replayed turn that reads README.md five times in
// parallel, then answers.
func fiveReadsScript() string {
	var b strings.Builder
	b.WriteString(`{"match": {"tool_results": ["r1","r2","r3","r4","r5"]}}` + "\n")
	b.WriteString(`{"TextDelta": "Five reads done."}` + "\n\"Done\"\n")
	b.WriteString(`{"match": {"user": ""}}` + "\n")
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, `{"ToolCallStart": {"id": "r%d", "name": "read_file"}}`+"\n", i)
		fmt.Fprintf(&b, `{"ToolCallDelta": {"id": "r%d", "args_delta": "{\"file_path\":\"README.md\"}"}}`+"\n", i)
		fmt.Fprintf(&b, `{"ToolCallEnd": {"id": "r%d"}}`+"\n", i)
	}
	b.WriteString("\"Done\"\n")
	return b.String()
}

// bootAgent boots the whole agent stack, as cmd/astrid does, with the
// replay provider playing script; edit, if given, changes the options
// (a tracer, a config) before the boot.
func bootAgent(b testing.TB, script string, edit ...func(*Options)) *Kernel {
	b.Helper()
	home, ws := b.TempDir(), b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# A project\nIt has a README.\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	setReplayScript(b, home, ws, script)
	cfg := config.Default()
	cfg.Limits.RateBytesPerSec = 1 << 40
	opts := Options{
		Home: home, Workspace: ws, Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Builtins: []Builtin{
			{Manifest: router.Manifest, New: router.New},
			{Manifest: approval.Manifest, New: approval.New},
			{Manifest: fs.Manifest, New: fs.New},
			{Manifest: session.Manifest, New: session.New},
			{Manifest: replay.Manifest, New: replay.New},
			{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
			{Manifest: react.Manifest, New: react.New},
		},
		Frontends: append(testFrontends(), agentclient.ACL()),
	}
	for _, e := range edit {
		e(&opts)
	}
	k, err := Boot(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	return k
}

// setReplayScript writes script into ws and sets it as the replay
// provider's [env] script in home's state, before the kernel boots.
func setReplayScript(tb testing.TB, home, ws, script string) {
	tb.Helper()
	path := filepath.Join(ws, "script.jsonl")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	m, _ := manifest.Parse(replay.Manifest, manifest.FileName, "")
	if err := st.Config(m.ID()).Set("script", []byte(path)); err != nil {
		tb.Fatal(err)
	}
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkAgentTurn is DESIGN §7's agent benchmark: one replayed turn with
// five parallel read_file calls, end to end in-process (prompt → session
// append → prompt builder → provider stream → five tool calls through the
// approval layer and the router → session append → provider → answer →
// session append), each turn
// in a new session. Besides ns/op it reports capsule-µs/turn, the time the
// capsules' own handlers ran (the CPU ledger's charge: handler time less
// the time spent waiting in host calls), and kernel-µs/turn, the rest: the
// bus, dispatch, the host calls and the store's commits. Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench AgentTurn -count 5 ./internal/kernel/
//
// with TMPDIR=/dev/shm for state.db on tmpfs (the session store's durable
// appends then cost no disk flush).
func BenchmarkAgentTurn(b *testing.B) {
	k := bootAgent(b, fiveReadsScript())
	ctx := context.Background()
	turn := func(i int) {
		final, err := agentclient.Run(ctx, k.Frontend(), agentclient.Prompt{SessionID: fmt.Sprintf("b%d", i), Text: "read it five times"}, nil)
		if err != nil || final.Outcome != ipc.OutcomeAnswer {
			b.Fatalf("turn %d: %+v, %v", i, final, err)
		}
	}
	turn(-1) // the prompt builder's tool catalogue is cached from here on
	before := k.Ledger.Usage(ipc.DefaultPrincipal).CPU
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		turn(i)
	}
	wall := time.Since(start)
	b.StopTimer()
	capsules := k.Ledger.Usage(ipc.DefaultPrincipal).CPU - before
	perTurn := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(perTurn(capsules), "capsule-µs/turn")
	b.ReportMetric(perTurn(wall-capsules), "kernel-µs/turn")
}
