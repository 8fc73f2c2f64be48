package wasm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/testutil"
)

func invocationOf(handler, principal string) hostapi.Invocation {
	return hostapi.Invocation{
		Handler: handler, Pattern: "hostile.v1." + handler, Topic: "hostile.v1." + handler,
		SourceID: "test", Principal: principal, Payload: []byte(`{}`),
	}
}

// guard only keeps a broken engine from hanging a test's wait
// (testutil.WaitFor); it is not a speed assertion.
const guard = 30 * time.Second

// TestPoolBoundsInstancesAndQueuesCalls: with a pool of two, two calls in
// flight take both slots; a third waits, and fails cleanly when its context
// ends first without taking a slot with it; a waiting call is served when
// a slot frees, first come first served; nothing is left busy or waiting.
func TestPoolBoundsInstancesAndQueuesCalls(t *testing.T) {
	f := loadHostile(t, Options{PoolSize: 2})
	e := f.eng

	sleepers := make([]context.CancelFunc, 2)
	var wg sync.WaitGroup
	for i := range sleepers {
		ctx, cancel := context.WithCancel(context.Background())
		sleepers[i] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = e.Invoke(ctx, invocationOf("sleep", "alice"))
		}()
	}
	testutil.WaitFor(t, guard, "two busy instances", func() bool { return e.Stats().Busy == 2 })

	// A third call cannot get an instance before its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err := e.Invoke(ctx, invocationOf("noop", "bob"))
	cancel()
	if err == nil || !strings.Contains(err.Error(), "waiting for a free instance") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third call: %v, want a wait that ran out", err)
	}
	if s := e.Stats(); s.Busy != 2 || s.Waiting != 0 || s.Created > 2 {
		t.Fatalf("after the refused call: %+v", s)
	}

	// Two more queue up; freeing one slot serves the first of them. They
	// sleep too, so that who holds the slot is told by cancelling the one
	// still waiting: only a waiter fails with "waiting for a free instance".
	results := map[string]chan error{"carol": make(chan error, 1), "dave": make(chan error, 1)}
	cancels := map[string]context.CancelFunc{}
	for i, p := range []string{"carol", "dave"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[p] = cancel
		go func() {
			_, err := e.Invoke(ctx, invocationOf("sleep", p))
			results[p] <- err
		}()
		testutil.WaitFor(t, guard, p+" waiting", func() bool { return e.Stats().Waiting == i+1 })
	}
	sleepers[0]() // the interrupted instance is discarded; its slot goes to carol
	testutil.WaitFor(t, guard, "the freed slot taken", func() bool { s := e.Stats(); return s.Busy == 2 && s.Waiting == 1 })
	cancels["dave"]()
	if err := <-results["dave"]; err == nil || !strings.Contains(err.Error(), "waiting for a free instance") {
		t.Fatalf("dave, who came second: %v; want him still waiting when cancelled (first come, first served)", err)
	}
	cancels["carol"]()
	if err := <-results["carol"]; err == nil || strings.Contains(err.Error(), "waiting for a free instance") {
		t.Fatalf("carol, who came first: %v; want her call interrupted while running", err)
	}
	sleepers[1]()
	wg.Wait()
	testutil.WaitFor(t, guard, "an idle pool", func() bool { s := e.Stats(); return s.Busy == 0 && s.Waiting == 0 })
	if s := e.Stats(); s.Idle > 2 || s.Created-s.Retired > 2 {
		t.Fatalf("pool holds more than its two instances: %+v", s)
	}
	if _, err := e.Invoke(context.Background(), invocationOf("noop", "erin")); err != nil {
		t.Fatalf("a call after all that: %v", err)
	}
}

// TestPoolPrefersThePrincipalsInstance: with two idle instances, a call
// goes to the one that last served its principal.
func TestPoolPrefersThePrincipalsInstance(t *testing.T) {
	f := loadHostile(t, Options{PoolSize: 2})
	p := f.eng.pool
	ctx := context.Background()
	a, _, err := p.get(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := p.get(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	p.put(a, "alice")
	p.put(b, "bob")
	for _, who := range []string{"alice", "bob", "alice"} {
		got, _, err := p.get(ctx, who)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]*instance{"alice": a, "bob": b}[who]; got != want {
			t.Fatalf("%s got the other principal's instance", who)
		}
		p.put(got, who)
	}
	if s := p.stats(); s.Busy != 0 || s.Idle != 2 {
		t.Fatalf("stats %+v", s)
	}
}
