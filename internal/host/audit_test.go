package host

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/audit"
)

// auditFixture is a fixture whose host records into an audit chain in dir.
func auditFixture(t *testing.T) (fixture, *audit.Log, string) {
	t.Helper()
	f := newFixture(t)
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := audit.Open(audit.Options{Dir: dir, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f.deps.Audit = l
	return f, l, dir
}

func entriesOf(t *testing.T, l *audit.Log, dir, principal string) []audit.Entry {
	t.Helper()
	if err := l.Append(context.Background(), audit.Entry{Principal: principal, Kind: audit.KindNote}); err != nil {
		t.Fatal(err) // everything queued before it is on disk now
	}
	var out []audit.Entry
	if err := audit.Show(dir, audit.Filter{Principals: []string{principal}}, func(r audit.Record) error {
		if r.Entry.Kind != audit.KindNote {
			out = append(out, r.Entry)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Only a tool_middleware capsule records, only the four kinds, always in
// the invoking principal's chain under its own id; digests are hashed by
// the host.
func TestAuditRecordGate(t *testing.T) {
	f, l, dir := auditFixture(t)
	plain := f.capsule(t, "[package]\nname = \"plain\"\nversion = \"0.1.0\"\n")
	mw := f.capsule(t, "[package]\nname = \"mw\"\nversion = \"0.1.0\"\n[capabilities]\ntool_middleware = true\n")
	pc, _ := plain.Begin(context.Background(), "alice")
	defer pc.End()
	if err := pc.AuditRecord(hostapi.AuditRecord{Kind: hostapi.AuditToolEnded, Subject: "x"}); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Fatalf("a capsule without tool_middleware: %v, want denied", err)
	}
	mc, _ := mw.Begin(context.Background(), "alice")
	defer mc.End()
	for _, bad := range []hostapi.AuditRecord{
		{Kind: "grant.recorded"}, {Kind: "capsule.loaded"}, {Kind: ""}, {Kind: "token.issued"},
	} {
		if err := mc.AuditRecord(bad); hostapi.CodeOf(err) != hostapi.CodeInvalid {
			t.Errorf("kind %q: %v, want invalid", bad.Kind, err)
		}
	}
	if err := mc.AuditRecord(hostapi.AuditRecord{Kind: hostapi.AuditToolEnded, Subject: "read_file", Outcome: "ok",
		Detail: map[string]string{"recorded_by": "someone-else"}, Digest: map[string][]byte{"result": []byte("secret data")}}); err != nil {
		t.Fatal(err)
	}
	got := entriesOf(t, l, dir, "alice")
	sum := sha256.Sum256([]byte("secret data"))
	if len(got) != 1 || got[0].Principal != "alice" || got[0].Detail["recorded_by"] != "mw" ||
		got[0].Detail["result_sha256"] != hex.EncodeToString(sum[:]) || got[0].Detail["result"] != "" {
		t.Fatalf("entries %+v", got)
	}
}

// Each process call refused for its grants or its confinement leaves a
// confinement.refused entry naming the program and why.
func TestRefusedProcessIsAudited(t *testing.T) {
	f, l, dir := auditFixture(t)
	c := f.capsule(t, procCapsule)
	call, _ := c.Begin(context.Background(), "default")
	defer call.End()
	want := 0
	for _, tc := range badProcessRequests(t, f) {
		if _, err := call.ProcessRun(tc.req); hostapi.CodeOf(err) != tc.code {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.code == hostapi.CodeDenied {
			want++
		}
	}
	got := entriesOf(t, l, dir, "default")
	if len(got) != want {
		t.Fatalf("%d entries for %d refusals: %+v", len(got), want, got)
	}
	for _, e := range got {
		if e.Kind != audit.KindConfineRefused || e.Capsule != c.ID() || e.Detail["op"] != "process_run" || e.Detail["reason"] == "" {
			t.Fatalf("entry %+v", e)
		}
	}
}

// Any capsule may record that it refused its principal's work over a
// limit: in that principal's chain, under its own id, the limit named, at
// most one entry a second however often it asks; without a limit named
// it is refused.
func TestAuditQuotaRefusedFromAnyCapsule(t *testing.T) {
	f, l, dir := auditFixture(t)
	plain := f.capsule(t, "[package]\nname = \"plain\"\nversion = \"0.1.0\"\n")
	pc, _ := plain.Begin(context.Background(), "bob")
	defer pc.End()
	if err := pc.AuditRecord(hostapi.AuditRecord{Kind: hostapi.AuditQuotaRefused}); hostapi.CodeOf(err) != hostapi.CodeInvalid {
		t.Fatalf("no limit named: %v, want invalid", err)
	}
	for range 20 {
		if err := pc.AuditRecord(hostapi.AuditRecord{Kind: hostapi.AuditQuotaRefused, Capsule: "forged", Subject: "tokens_per_day",
			Detail: map[string]string{"limit": "30", "recorded_by": "forged"}}); err != nil {
			t.Fatal(err)
		}
	}
	// Twenty in a row fall in one second, or two when they straddle a
	// second's turn: never more.
	got := entriesOf(t, l, dir, "bob")
	if len(got) < 1 || len(got) > 2 {
		t.Fatalf("%d entries for 20 refusals, want one a second: %+v", len(got), got)
	}
	for _, e := range got {
		if e.Kind != audit.KindQuotaRefused || e.Subject != "tokens_per_day" || e.Capsule != "plain" ||
			e.Detail["recorded_by"] != "plain" || e.Detail["limit"] != "30" || e.Outcome != "refused" {
			t.Fatalf("entry %+v", e)
		}
	}
}
