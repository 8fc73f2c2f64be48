package ledger

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/astrid-go/astrid/internal/clock"
)

// window is the length of one budget window (upstream: 1 s).
const window = time.Second

// Ledger accumulates CPU time per principal. It is safe for concurrent use.
type Ledger struct {
	budget time.Duration // per window; 0 means unlimited
	// clock, when set (tests), places charges and admissions in windows
	// instead of the readings engines pass.
	clock func() time.Time

	// own, when set, gives some principals a budget of their own (an
	// agent's, astrid agent create --cpu-budget): ok false keeps budget.
	own atomic.Pointer[func(principal string) (time.Duration, bool)]

	mu       sync.Mutex
	accounts map[string]*account
}

// SetOwnBudgets makes f the source of principals' own budgets: a principal
// for which f answers ok is held to that budget instead of the ledger's
// (0: unlimited). f is called on every admission and must be cheap.
func (l *Ledger) SetOwnBudgets(f func(principal string) (time.Duration, bool)) {
	l.own.Store(&f)
}

// budgetOf is principal's budget per window.
func (l *Ledger) budgetOf(principal string) time.Duration {
	if f := l.own.Load(); f != nil {
		if b, ok := (*f)(principal); ok {
			return b
		}
	}
	return l.budget
}

// account is one principal's; its fields are guarded by Ledger.mu.
type account struct {
	total       time.Duration
	calls       uint64
	refused     uint64
	windowStart int64 // Unix nanoseconds
	windowUsed  time.Duration
}

// Usage is one principal's totals.
type Usage struct {
	CPU     time.Duration // guest time charged, ever
	Calls   uint64        // calls charged
	Refused uint64        // calls refused for being over budget
}

// New returns a ledger enforcing budget of CPU time per principal per
// second; budget 0 enforces nothing (time is still counted).
func New(budget time.Duration) *Ledger {
	return &Ledger{budget: budget, accounts: map[string]*account{}}
}

// NewWithClock is New with an injected clock (tests).
func NewWithClock(budget time.Duration, now func() time.Time) *Ledger {
	return &Ledger{budget: budget, clock: now, accounts: map[string]*account{}}
}

// Budget is the per-second budget (0: unlimited).
func (l *Ledger) Budget() time.Duration { return l.budget }

// OverBudgetError says a principal spent its CPU budget for this second.
type OverBudgetError struct {
	Principal string
	Used      time.Duration
	Budget    time.Duration
}

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("principal %s exceeded its CPU budget of %s per second (used %s)", e.Principal, e.Budget, e.Used)
}

// account is principal's account at now, its window moved on if it ended.
// l.mu must be held.
func (l *Ledger) account(principal string, now int64) *account {
	a := l.accounts[principal]
	if a == nil {
		a = &account{windowStart: now}
		l.accounts[principal] = a
	}
	// A clock stepped back starts a new window too: anchored to a future
	// start, the window would last until the clock caught up.
	if since := now - a.windowStart; since >= int64(window) || since < 0 {
		a.windowStart, a.windowUsed = now, 0
	}
	return a
}

// Admit reports whether principal may start a call: it may unless it has
// already spent more than the budget in the current second (spending
// exactly the budget is allowed). A refusal is counted.
func (l *Ledger) Admit(principal string) error {
	if l == nil || l.budget <= 0 && l.own.Load() == nil {
		return nil
	}
	return l.AdmitAt(principal, clock.Process.UnixNano())
}

// at is the instant a reading now stands for: now itself, or the test
// clock's reading when the ledger has one.
func (l *Ledger) at(now int64) int64 {
	if l.clock != nil {
		return l.clock().UnixNano()
	}
	return now
}

// AdmitAt is Admit at now (Unix nanoseconds), for an engine that has already read the
// clock for the call (a clock read is a measurable part of a wasm call).
func (l *Ledger) AdmitAt(principal string, now int64) error {
	if l == nil {
		return nil
	}
	budget := l.budgetOf(principal)
	if budget <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.account(principal, l.at(now))
	if a.windowUsed > budget {
		a.refused++
		return &OverBudgetError{Principal: principal, Used: a.windowUsed, Budget: budget}
	}
	return nil
}

// Charge adds d of guest time to principal.
func (l *Ledger) Charge(principal string, d time.Duration) {
	if l == nil {
		return
	}
	l.ChargeAt(principal, d, clock.Process.UnixNano())
}

// ChargeAt is Charge at now (Unix nanoseconds: the end of the call).
func (l *Ledger) ChargeAt(principal string, d time.Duration, now int64) {
	if l == nil {
		return
	}
	if d < 0 {
		d = 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.account(principal, l.at(now))
	a.total += d
	a.windowUsed += d
	a.calls++
}

// Usage returns principal's totals.
func (l *Ledger) Usage(principal string) Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.accounts[principal]
	if a == nil {
		return Usage{}
	}
	return Usage{CPU: a.total, Calls: a.calls, Refused: a.refused}
}

// Snapshot returns every principal's totals.
func (l *Ledger) Snapshot() map[string]Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]Usage, len(l.accounts))
	for p, a := range l.accounts {
		out[p] = Usage{CPU: a.total, Calls: a.calls, Refused: a.refused}
	}
	return out
}
