package kernel

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/ledger"
	"github.com/astrid-go/astrid/internal/principals"
	"github.com/astrid-go/astrid/internal/testutil"
)

// An agent created while the kernel runs is held to its own CPU budget by
// the kernel's ledger (within the agents' refresh), refused with the
// budget named; another principal keeps the host's.
func TestAnAgentsCPUBudgetIsEnforced(t *testing.T) {
	k, _ := bootTest(t, []Builtin{})
	if err := principals.NewRegistry(k.Store).Create(principals.Agent{Name: "bot", CPUBudgetMs: 1}); err != nil {
		t.Fatal(err)
	}
	var last error
	testutil.WaitFor(t, 10*time.Second, "the ledger to hold bot to its budget", func() bool {
		k.Ledger.Charge("bot", 50*time.Millisecond)
		last = k.Ledger.Admit("bot")
		return last != nil
	})
	var ob *ledger.OverBudgetError
	if !errors.As(last, &ob) || ob.Budget != time.Millisecond || !strings.Contains(last.Error(), "CPU budget of 1ms per second") {
		t.Fatalf("bot over its budget: %v", last)
	}
	k.Ledger.Charge("alice", 50*time.Millisecond)
	if err := k.Ledger.Admit("alice"); err != nil {
		t.Fatalf("alice (no agent, the host's budget): %v", err)
	}
}
