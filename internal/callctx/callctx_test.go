package callctx

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit bounds waits so that a bug fails instead of hanging; it is no
// speed assertion.
const waitLimit = 10 * time.Second

func waitDone(t *testing.T, c context.Context) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(waitLimit):
		t.Fatal("context not cancelled")
	}
}

type key struct{}

func TestDeadlineCancelsWithDeadlineExceeded(t *testing.T) {
	parent := context.WithValue(context.Background(), key{}, "v")
	c := New(parent, time.Now().Add(20*time.Millisecond))
	if d, ok := c.Deadline(); !ok || d.IsZero() {
		t.Fatal("no deadline")
	}
	if c.Err() != nil || c.Cause() != nil {
		t.Fatal("cancelled at birth")
	}
	waitDone(t, c)
	if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(Cause(c), context.DeadlineExceeded) {
		t.Fatalf("err %v cause %v", c.Err(), Cause(c))
	}
	if c.Value(key{}) != "v" {
		t.Fatal("parent's value lost")
	}
}

func TestTheEarlierDeadlineWins(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	pd, _ := parent.Deadline()
	c := New(parent, time.Now().Add(2*time.Hour))
	if d, _ := c.Deadline(); !d.Equal(pd) {
		t.Fatalf("deadline %v, want the parent's %v", d, pd)
	}
	c.Cancel(nil)
	soon := time.Now().Add(time.Minute)
	c2 := New(parent, soon)
	if d, _ := c2.Deadline(); !d.Equal(soon) {
		t.Fatalf("deadline %v, want %v", d, soon)
	}
	c2.Cancel(nil)
	c3 := New(context.Background(), time.Time{})
	if _, ok := c3.Deadline(); ok {
		t.Fatal("a deadline from nowhere")
	}
	c3.Cancel(nil)
}

func TestCancelKeepsTheFirstCause(t *testing.T) {
	c := New(context.Background(), time.Now().Add(time.Hour))
	why := errors.New("cancel key k")
	c.Cancel(why)
	c.Cancel(errors.New("later"))
	waitDone(t, c)
	if !errors.Is(c.Err(), context.Canceled) || Cause(c) != why {
		t.Fatalf("err %v cause %v", c.Err(), Cause(c))
	}
}

func TestParentCancellationReachesTheCall(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	c := New(context.WithValue(parent, key{}, 1), time.Time{})
	unloaded := errors.New("capsule unloaded")
	cancel(unloaded)
	waitDone(t, c)
	if !errors.Is(c.Err(), context.Canceled) || Cause(c) != unloaded {
		t.Fatalf("err %v cause %v", c.Err(), Cause(c))
	}
	// Made under a parent already cancelled, it is born cancelled.
	c2 := New(parent, time.Time{})
	if Cause(c2) != unloaded {
		t.Fatalf("cause %v", Cause(c2))
	}
}

func TestAfterFuncRunsOnceAndStops(t *testing.T) {
	c := New(context.Background(), time.Time{})
	ran := make(chan struct{}, 2)
	stopped := AfterFunc(c, func() { ran <- struct{}{} })
	if !stopped.Stop() {
		t.Fatal("stop before cancel reported false")
	}
	AfterFunc(c, func() { ran <- struct{}{} })
	c.Cancel(nil)
	select {
	case <-ran:
	case <-time.After(waitLimit):
		t.Fatal("AfterFunc did not run")
	}
	late := AfterFunc(c, func() { ran <- struct{}{} })
	select {
	case <-ran:
	case <-time.After(waitLimit):
		t.Fatal("AfterFunc after cancel did not run")
	}
	if late.Stop() {
		t.Fatal("stop after the func ran reported true")
	}
	select {
	case <-ran:
		t.Fatal("the stopped func ran")
	case <-time.After(20 * time.Millisecond):
	}
}

// TestDerivedContextsFollow: contexts the context package derives from a
// Context are cancelled with it, through its AfterFunc, with no goroutine
// left behind (goleak).
func TestDerivedContextsFollow(t *testing.T) {
	c := New(context.Background(), time.Now().Add(time.Hour))
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	timed, cancelTimed := context.WithTimeout(c, time.Hour)
	defer cancelTimed()
	if d, _ := timed.Deadline(); !d.Equal(c.deadline) {
		t.Fatal("a derived timeout ignores the call's earlier deadline")
	}
	c.Cancel(errors.New("why"))
	waitDone(t, child)
	waitDone(t, timed)
	if !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("child err %v", child.Err())
	}
}

func TestNestedContexts(t *testing.T) {
	outer := New(context.Background(), time.Time{})
	inner := New(outer, time.Time{})
	why := errors.New("outer cancelled")
	outer.Cancel(why)
	waitDone(t, inner)
	if Cause(inner) != why {
		t.Fatalf("inner cause %v", Cause(inner))
	}
}

// TestChildrenOfAContextRegisterWithoutTheContextPackage: a Context made
// under a Context (or a Carrier of one) is on its parent's own list; it is
// cancelled with the parent's cause, and once it ends it leaves the list, so
// a long-lived parent (a capsule's) does not grow with its calls.
func TestChildrenOfAContextRegisterWithoutTheContextPackage(t *testing.T) {
	parent := New(context.Background(), time.Time{})
	carrier := &valueCarrier{Context: parent}
	for i := range 1000 {
		var under context.Context = parent
		if i%2 == 1 {
			under = carrier
		}
		c := New(under, time.Time{})
		c.Cancel(nil)
	}
	parent.mu.Lock()
	left := len(parent.funcs)
	parent.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d registrations left on the parent after its children ended", left)
	}
	live := New(carrier, time.Time{})
	if live.Value(carrierKey{}) != "v" {
		t.Fatal("a child of a Carrier does not see its value")
	}
	cause := errors.New("capsule unloaded")
	parent.Cancel(cause)
	select {
	case <-live.Done():
	case <-time.After(waitLimit):
		t.Fatal("the child was not cancelled with its parent")
	}
	if !errors.Is(live.Err(), context.Canceled) || Cause(live) != cause {
		t.Fatalf("child: err %v, cause %v; want context.Canceled and %v", live.Err(), Cause(live), cause)
	}
	late := New(carrier, time.Time{})
	if Cause(late) != cause {
		t.Fatalf("a child made after the parent ended: cause %v, want %v", Cause(late), cause)
	}
}

// TestWatchCostsNoAllocation: the per-call registrations (a call's watch
// of its context, a call context under a capsule's) allocate nothing.
func TestWatchCostsNoAllocation(t *testing.T) {
	parent := New(context.Background(), time.Time{})
	f := func() {}
	allocs := testing.AllocsPerRun(1000, func() {
		w := AfterFunc(parent, f)
		if !w.Stop() {
			t.Fatal("stop before cancel reported false")
		}
	})
	if allocs != 0 {
		t.Errorf("AfterFunc + Stop: %v allocations, want 0", allocs)
	}
	allocs = testing.AllocsPerRun(1000, func() {
		c := New(parent, time.Time{})
		c.Cancel(nil)
	})
	if allocs > 1 {
		t.Errorf("New under a Context + Cancel: %v allocations, want 1 (the Context)", allocs)
	}
}

type carrierKey struct{}

// valueCarrier is a Context with a value on top, as the dispatcher's runner
// context is.
type valueCarrier struct{ *Context }

func (c *valueCarrier) Value(key any) any {
	if key == (carrierKey{}) {
		return "v"
	}
	return c.Context.Value(key)
}
