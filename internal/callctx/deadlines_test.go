package callctx

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// listed returns q's contexts head to tail, checking the links both ways
// and the order of deadlines.
func listed(t *testing.T, q *Deadlines) []*Context {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*Context
	var prev *Context
	for c := q.head; c != nil; c = c.qnext {
		if c.qprev != prev || !c.queued {
			t.Fatal("list links are broken")
		}
		if prev != nil && prev.deadline.After(c.deadline) {
			t.Fatalf("deadline %v listed after %v", c.deadline, prev.deadline)
		}
		out = append(out, c)
		prev = c
	}
	if q.tail != prev {
		t.Fatal("tail is not the last context")
	}
	return out
}

func TestDeadlinesExpireInDeadlineOrder(t *testing.T) {
	var q Deadlines
	now := time.Now()
	// Joined out of order: the list sorts them, and the earliest re-arms
	// the timer though a later one armed it first.
	late := q.New(context.Background(), now.Add(time.Hour))
	soon := q.New(context.Background(), now.Add(30*time.Millisecond))
	sooner := q.New(context.Background(), now.Add(20*time.Millisecond))
	for _, c := range []*Context{late, soon, sooner} {
		if c.timer != nil {
			t.Fatal("a context on a Deadlines started a timer of its own")
		}
	}
	if got := listed(t, &q); len(got) != 3 || got[0] != sooner || got[1] != soon || got[2] != late {
		t.Fatalf("listed %d contexts in the wrong order", len(got))
	}
	waitDone(t, sooner)
	waitDone(t, soon)
	for _, c := range []*Context{sooner, soon} {
		if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(Cause(c), context.DeadlineExceeded) {
			t.Fatalf("err %v cause %v, want the deadline", c.Err(), Cause(c))
		}
	}
	if late.Err() != nil {
		t.Fatal("a context an hour from its deadline expired")
	}
	if got := listed(t, &q); len(got) != 1 || got[0] != late {
		t.Fatalf("%d contexts left on the list, want the late one", len(got))
	}
	late.Cancel(nil)
	if got := listed(t, &q); len(got) != 0 {
		t.Fatalf("%d contexts left after the last was cancelled", len(got))
	}
}

func TestCancelledContextsLeaveTheList(t *testing.T) {
	var q Deadlines
	deadline := time.Now().Add(time.Hour)
	cs := make([]*Context, 5)
	for i := range cs {
		cs[i] = q.New(context.Background(), deadline.Add(time.Duration(i)))
	}
	// From the middle, the head and the tail.
	for _, i := range []int{2, 0, 4, 1, 3} {
		cs[i].Cancel(nil)
		for _, c := range listed(t, &q) {
			if c == cs[i] {
				t.Fatalf("context %d still listed after Cancel", i)
			}
		}
	}
}

// An inherited deadline is the parent's to keep: the context stays off
// the list and ends with its parent.
func TestInheritedDeadlinesStayOffTheList(t *testing.T) {
	var q Deadlines
	parent, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	c := q.New(parent, time.Now().Add(time.Hour))
	if len(listed(t, &q)) != 0 {
		t.Fatal("a context with its parent's deadline joined the list")
	}
	waitDone(t, c)
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("err %v, want the parent's deadline", c.Err())
	}
}

func TestDeadlinesUnderConcurrency(t *testing.T) {
	var q Deadlines
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				// A few expire while others join and leave.
				d := time.Hour
				if i%50 == g {
					d = time.Millisecond
				}
				c := q.New(context.Background(), time.Now().Add(d))
				if d == time.Millisecond {
					select {
					case <-c.Done():
					case <-time.After(waitLimit):
						t.Error("a context past its deadline was not cancelled")
						return
					}
					continue
				}
				c.Cancel(nil)
			}
		})
	}
	wg.Wait()
	if got := listed(t, &q); len(got) != 0 {
		t.Fatalf("%d contexts left on the list", len(got))
	}
}

func BenchmarkNewWithOwnTimer(b *testing.B) {
	parent := New(context.Background(), time.Time{})
	for b.Loop() {
		New(parent, time.Now().Add(5*time.Minute)).Cancel(nil)
	}
}

func BenchmarkNewOnDeadlines(b *testing.B) {
	parent := New(context.Background(), time.Time{})
	var q Deadlines
	for b.Loop() {
		q.New(parent, time.Now().Add(5*time.Minute)).Cancel(nil)
	}
}
