package ledger

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestAdmitAndCharge(t *testing.T) {
	type step struct {
		advance time.Duration
		charge  time.Duration
		admit   bool // expected Admit result before the charge
	}
	tests := []struct {
		name   string
		budget time.Duration
		steps  []step
	}{
		{"unlimited never refuses", 0, []step{{charge: time.Hour, admit: true}, {admit: true}}},
		{"exactly the budget is allowed", 100 * time.Millisecond, []step{{charge: 100 * time.Millisecond, admit: true}, {admit: true}}},
		{"over the budget is refused", 100 * time.Millisecond, []step{{charge: 101 * time.Millisecond, admit: true}, {admit: false}}},
		{"the next second admits again", 100 * time.Millisecond, []step{{charge: 500 * time.Millisecond, admit: true}, {admit: false}, {advance: time.Second, admit: true}}},
		{"charges add up within a second", 100 * time.Millisecond, []step{{charge: 60 * time.Millisecond, admit: true}, {advance: 100 * time.Millisecond, charge: 60 * time.Millisecond, admit: true}, {admit: false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{t: time.Unix(1000, 0)}
			l := NewWithClock(tt.budget, c.now)
			for i, s := range tt.steps {
				c.t = c.t.Add(s.advance)
				err := l.Admit("alice")
				if (err == nil) != s.admit {
					t.Fatalf("step %d: Admit = %v, want admitted %v", i, err, s.admit)
				}
				var ob *OverBudgetError
				if err != nil && (!errors.As(err, &ob) || ob.Principal != "alice") {
					t.Fatalf("step %d: error %v is not an OverBudgetError for alice", i, err)
				}
				l.Charge("alice", s.charge)
			}
		})
	}
}

func TestPrincipalsAreSeparate(t *testing.T) {
	l := New(10 * time.Millisecond)
	l.Charge("alice", time.Second)
	if err := l.Admit("alice"); err == nil {
		t.Fatal("alice should be over budget")
	}
	if err := l.Admit("bob"); err != nil {
		t.Fatalf("bob refused because of alice: %v", err)
	}
	if u := l.Usage("alice"); u.CPU != time.Second || u.Calls != 1 || u.Refused != 1 {
		t.Errorf("alice usage = %+v", u)
	}
	if u := l.Snapshot()["bob"]; u.CPU != 0 || u.Refused != 0 {
		t.Errorf("bob usage = %+v", u)
	}
}

func TestConcurrentCharges(t *testing.T) {
	l := New(0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				l.Charge("p", time.Microsecond)
			}
		}()
	}
	wg.Wait()
	if u := l.Usage("p"); u.CPU != 8000*time.Microsecond || u.Calls != 8000 {
		t.Errorf("usage = %+v, want 8ms over 8000 calls", u)
	}
}

func TestNegativeChargeIsZero(t *testing.T) {
	l := New(0)
	l.Charge("p", -time.Second)
	if u := l.Usage("p"); u.CPU != 0 || u.Calls != 1 {
		t.Errorf("usage = %+v", u)
	}
}

// TestInterleavedPrincipalsKeepTheirOwnAccounts: charges alternating
// between principals (the remembered last account switching each time)
// land on each principal's own account.
func TestInterleavedPrincipalsKeepTheirOwnAccounts(t *testing.T) {
	l := New(time.Hour)
	for i := range 100 {
		for _, p := range []string{"alice", "bob", "bob", "carol"} {
			if err := l.Admit(p); err != nil {
				t.Fatalf("round %d: %s refused: %v", i, p, err)
			}
			l.Charge(p, time.Millisecond)
		}
	}
	for p, want := range map[string]time.Duration{"alice": 100 * time.Millisecond, "bob": 200 * time.Millisecond, "carol": 100 * time.Millisecond} {
		if u := l.Usage(p); u.CPU != want {
			t.Errorf("%s charged %v, want %v", p, u.CPU, want)
		}
	}
}

// TestWindowSurvivesAClockStepBack: readings come from the wall clock, so a
// step of the system clock can show. A principal over budget when the
// clock steps back an hour gets a new window, not an hour's wait.
func TestWindowSurvivesAClockStepBack(t *testing.T) {
	l := New(100 * time.Millisecond)
	t0 := time.Unix(1_700_000_000, 0).UnixNano()
	l.ChargeAt("alice", time.Second, t0)
	if err := l.AdmitAt("alice", t0+int64(time.Millisecond)); err == nil {
		t.Fatal("alice over budget was admitted")
	}
	if err := l.AdmitAt("alice", t0-int64(time.Hour)); err != nil {
		t.Fatalf("after the clock stepped back an hour: %v", err)
	}
}

// Admission sees every charge that put a principal over its budget,
// whichever principal was seen before, and the end of that window.
func TestAdmissionFollowsCharges(t *testing.T) {
	l := New(10 * time.Millisecond)
	now := time.Unix(1000, 0).UnixNano()
	for range 3 {
		if err := l.AdmitAt("bob", now); err != nil {
			t.Fatalf("bob refused within budget: %v", err)
		}
		l.ChargeAt("bob", time.Millisecond, now)
	}
	l.ChargeAt("alice", 11*time.Millisecond, now)
	for range 2 { // alice last, then bob last
		if err := l.AdmitAt("alice", now); err == nil {
			t.Fatal("alice admitted over budget")
		}
		if err := l.AdmitAt("bob", now); err != nil {
			t.Fatalf("bob refused: %v", err)
		}
	}
	l.ChargeAt("bob", 8*time.Millisecond, now) // bob: 11 ms
	if err := l.AdmitAt("bob", now); err == nil {
		t.Fatal("bob admitted over budget right after the charge that put him there")
	}
	next := now + int64(time.Second)
	for _, p := range []string{"alice", "bob", "bob"} {
		if err := l.AdmitAt(p, next); err != nil {
			t.Fatalf("%s refused in the next window: %v", p, err)
		}
	}
	if u := l.Usage("alice"); u.Refused != 2 {
		t.Errorf("alice refused %d times, want 2", u.Refused)
	}
}

// TestConcurrentAdmissionAndCharges: admissions and charges of several
// principals from many goroutines (under -race) refuse only the principal
// that is over its budget, and count every refusal.
func TestConcurrentAdmissionAndCharges(t *testing.T) {
	l := New(10 * time.Millisecond)
	now := time.Unix(1000, 0).UnixNano()
	l.ChargeAt("alice", 11*time.Millisecond, now)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Go(func() {
			for range 500 {
				if g%2 == 0 {
					if l.AdmitAt("alice", now) == nil {
						errs <- errors.New("alice admitted over budget")
						return
					}
					continue
				}
				if err := l.AdmitAt("bob", now); err != nil {
					errs <- err
					return
				}
				l.ChargeAt("bob", 0, now)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if u := l.Usage("alice"); u.Refused != 4*500 {
		t.Errorf("alice refused %d times, want %d", u.Refused, 4*500)
	}
	if u := l.Usage("bob"); u.Calls != 4*500 || u.Refused != 0 {
		t.Errorf("bob usage %+v, want %d calls and no refusal", u, 4*500)
	}
}

// A principal with a budget of its own (an agent's) is held to it, under
// a host budget or none; the others keep the host's.
func TestOwnBudgets(t *testing.T) {
	for _, host := range []time.Duration{0, time.Second} {
		c := &fakeClock{t: time.Unix(1000, 0)}
		l := NewWithClock(host, c.now)
		l.SetOwnBudgets(func(p string) (time.Duration, bool) { return 10 * time.Millisecond, p == "bot" })
		l.Charge("bot", 20*time.Millisecond)
		l.Charge("alice", 20*time.Millisecond)
		err := l.Admit("bot")
		var ob *OverBudgetError
		if !errors.As(err, &ob) || ob.Budget != 10*time.Millisecond || !strings.Contains(err.Error(), "CPU budget of 10ms per second") {
			t.Fatalf("host budget %s: bot over its own budget: %v", host, err)
		}
		if err := l.Admit("alice"); err != nil {
			t.Fatalf("host budget %s: alice refused: %v", host, err)
		}
	}
}
