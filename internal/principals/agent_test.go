package principals

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/store"
)

// Names are principal ids, never paths: every escape attempt is refused.
func TestValidateName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"alice", true},
		{"build-bot_2", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{"default", false},
		{"-rf", false},
		{"..", false},
		{".", false},
		{"../etc", false},
		{"a/b", false},
		{`a\b`, false},
		{"/etc/passwd", false},
		{"alice/../../x", false},
		{"a\x00b", false},
		{"a b", false},
		{"a\nb", false},
		{"ålice", false},
		{"%2e%2e", false},
		{"~root", false},
		{"a.b", false},
	} {
		err := ValidateName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateName(%q): %v does not wrap ErrInvalid", c.name, err)
		}
	}
}

func TestRegistry(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := NewRegistry(st)
	a := Agent{Name: "reader", Capsules: []string{"astrid-capsule-fs", "astrid-capsule-fs"}, ReadOnly: true, CPUBudgetMs: 50, TokensPerDay: 1000}
	if err := r.Create(a); err != nil {
		t.Fatal(err)
	}
	if err := r.Create(a); !errors.Is(err, ErrExists) {
		t.Fatalf("create twice: %v", err)
	}
	got, ok, err := r.Get("reader")
	if err != nil || !ok || !got.ReadOnly || len(got.Capsules) != 1 || !got.MayUse("astrid-capsule-fs") || got.MayUse("astrid-capsule-shell") {
		t.Fatalf("get: %+v %v %v", got, ok, err)
	}
	for _, bad := range []Agent{{Name: "../x"}, {Name: "x", Capsules: []string{"-rf"}}, {Name: "x", CPUBudgetMs: -1}, {Name: "x", TokensPerDay: -5}} {
		if err := r.Create(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("create %+v: %v", bad, err)
		}
	}
	// A record edited to name another agent is refused, not followed.
	if err := st.KV("default", "kernel").Set(agentPrefix+"evil", []byte(`{"name":"reader"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Get("evil"); err == nil {
		t.Fatal("a record naming another agent was read")
	}
	_ = st.KV("default", "kernel").Delete(agentPrefix + "evil")
	list, err := r.List()
	if err != nil || len(list) != 1 || list[0].Name != "reader" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := r.Remove("reader"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove("reader"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove twice: %v", err)
	}
}

func TestCPUBudgetsFollowTheRegistry(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := NewRegistry(st)
	now := time.Unix(1000, 0)
	budgets := r.Cache(time.Second, func() time.Time { return now }).CPUBudget
	if _, ok := budgets("bot"); ok {
		t.Fatal("a budget for an agent that does not exist")
	}
	if err := r.Create(Agent{Name: "bot", CPUBudgetMs: 25}); err != nil {
		t.Fatal(err)
	}
	if _, ok := budgets("bot"); ok {
		t.Fatal("re-read before the refresh")
	}
	now = now.Add(time.Second)
	if b, ok := budgets("bot"); !ok || b != 25*time.Millisecond {
		t.Fatalf("after the refresh: %v %v", b, ok)
	}
}
