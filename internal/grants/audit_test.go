package grants

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/hostkey"
	"github.com/astrid-go/astrid/internal/store"
)

// Approve and Revoke leave signed entries in the system chain beside the
// state database, naming the grants approved; an approval the chain
// cannot take is undone.
func TestBookRecordsInTheAuditChain(t *testing.T) {
	home := t.TempDir()
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := NewBook(st)
	if err := b.Approve(parse(t, "notes", base)); err != nil {
		t.Fatal(err)
	}
	if err := b.Revoke("notes"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "audit")
	var got []audit.Entry
	if err := audit.Show(dir, audit.Filter{Principals: []string{""}}, func(r audit.Record) error {
		got = append(got, r.Entry)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != audit.KindGrantRecorded || got[0].Capsule != "notes" ||
		!strings.Contains(got[0].Detail["grants"], `host_process = ["node"]`) || len(got[0].Detail["record_sha256"]) != 64 ||
		got[1].Kind != audit.KindGrantRemoved {
		t.Fatalf("entries %+v", got)
	}
	pub, err := hostkey.Public(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audit.VerifyChain(dir, "", pub); err != nil {
		t.Fatal(err)
	}

	// A chain that takes nothing (its last entry edited): not approved.
	path := audit.ChainPath(dir, "")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(data[:len(data)-3], []byte("x\"}\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.Approve(parse(t, "other", base)); err == nil {
		t.Fatal("approved though the audit chain did not take it")
	}
	if _, ok, _ := b.Approved("other"); ok {
		t.Fatal("the approval stayed though the chain did not take it")
	}
}
