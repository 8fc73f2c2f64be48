package kernel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/toolclient/toolclienttest"
)

// A tool call through the router leaves its start and end in the
// principal's chain, with the sha256 of its arguments and of its result,
// signed with the host key; the chain verifies.
func TestToolCallIsAudited(t *testing.T) {
	k, ws := bootTest(t, nil)
	if err := os.WriteFile(filepath.Join(ws, "small.txt"), []byte("a small file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"file_path":"small.txt"}`)
	call, done := toolclienttest.RoundTrip(t, k.Frontend(), "read_file", args, "a small file\n")
	if err := call(); err != nil {
		t.Fatal(err)
	}
	done()
	dir := config.Layout(k.opts.Home).Audit
	// The end was on disk before the result was answered; the start before it.
	var got []audit.Entry
	if err := audit.Show(dir, audit.Filter{Principals: []string{"default"}}, func(r audit.Record) error {
		got = append(got, r.Entry)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != audit.KindToolStarted || got[1].Kind != audit.KindToolEnded {
		t.Fatalf("chain of default: %+v", got)
	}
	sum := sha256.Sum256(args)
	if got[0].Subject != "read_file" || got[0].Capsule != "astrid-capsule-fs" || got[0].Detail["args_sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("start entry %+v", got[0])
	}
	if got[1].Outcome != "ok" || got[1].Capsule != "astrid-capsule-fs" || len(got[1].Detail["result_sha256"]) != 64 || got[1].Detail["recorded_by"] != "astrid-capsule-router" {
		t.Fatalf("end entry %+v", got[1])
	}
	if _, err := audit.VerifyChain(dir, "default", k.Audit.PublicKey()); err != nil {
		t.Fatal(err)
	}
}

// Every built-in's load is in the system chain once the kernel stops.
func TestCapsuleLoadsAreAudited(t *testing.T) {
	k, _ := bootTest(t, nil)
	k.Close()
	loaded := map[string]bool{}
	if err := audit.Show(config.Layout(k.opts.Home).Audit, audit.Filter{Principals: []string{""}}, func(r audit.Record) error {
		if r.Entry.Kind == audit.KindCapsuleLoaded && r.Entry.Outcome == "ok" {
			loaded[r.Entry.Capsule] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"astrid-capsule-router", "astrid-capsule-fs"} {
		if !loaded[id] {
			t.Errorf("no capsule.loaded entry for %s (have %v)", id, loaded)
		}
	}
	if _, err := audit.VerifyChain(config.Layout(k.opts.Home).Audit, "", k.Audit.PublicKey()); err != nil {
		t.Fatal(err)
	}
}
