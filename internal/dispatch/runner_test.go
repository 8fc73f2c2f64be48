package dispatch

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
)

// relay registers a three-step relay, as a tool call is: "req" is
// intercepted by "first", whose handler publishes "mid", intercepted by
// "second", whose handler publishes "done", which the returned route
// receives. Each handler records whether it ran under the runner the test
// published with.
type relay struct {
	ranOn  sync.Map // capsule id → *Runner its handler saw
	counts atomic.Int64
}

func newRelay(t *testing.T, d *Dispatcher) *relay {
	t.Helper()
	r := &relay{}
	step := func(id, next string) Target {
		return targetFunc(func(ctx context.Context, inv Invocation) (Verdict, error) {
			rn := RunnerFrom(ctx)
			r.ranOn.Store(id, rn)
			r.counts.Add(1)
			_, err := d.Publish(Caller{Capsule: id, Principal: inv.Principal, Runner: rn}, next, json.RawMessage(`{}`))
			return Verdict{}, err
		})
	}
	register(t, d, CapsuleACL{ID: "client", Publish: []string{"req"}, Subscribe: []string{"done"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "first", Publish: []string{"mid"}, Subscribe: []string{"req"}, Interceptors: []Interceptor{{Pattern: "req", Handler: "h", Priority: 100}}}, step("first", "mid"))
	register(t, d, CapsuleACL{ID: "second", Publish: []string{"done"}, Subscribe: []string{"mid"}, Interceptors: []Interceptor{{Pattern: "mid", Handler: "h", Priority: 100}}}, step("second", "done"))
	return r
}

// TestRunnerRunsTheRelayOnItsOwnGoroutine: a publish made with an open
// Runner leaves the interceptor call to it, and Run makes that call and the
// ones it causes before returning; nothing happens before Run.
func TestRunnerRunsTheRelayOnItsOwnGoroutine(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	r := newRelay(t, d)
	sub, err := d.Subscribe(Caller{Capsule: "client", Principal: "alice"}, "done", true)
	if err != nil {
		t.Fatal(err)
	}
	rn := d.NewRunner()
	rn.Open()
	mustPublish(t, d, Caller{Capsule: "client", Principal: "alice", Runner: rn}, "req", `{}`)
	if !rn.adopted.Load() {
		t.Fatal("the publish did not leave its interceptor call to the open runner")
	}
	if n := r.counts.Load(); n != 0 {
		t.Fatalf("%d handlers ran before Run", n)
	}
	rn.Run()
	if n := r.counts.Load(); n != 2 {
		t.Fatalf("after Run, %d handlers had run, want both steps of the relay", n)
	}
	for _, id := range []string{"first", "second"} {
		if got, _ := r.ranOn.Load(id); got != rn {
			t.Errorf("%s ran under runner %v, want the publisher's", id, got)
		}
	}
	if _, ok := sub.TryRecv(); !ok {
		t.Error("the relay's answer was not delivered by the time Run returned")
	}
	rn.Close()
	settle(t, d)
}

// TestClosedRunnerLeavesWorkToWorkers: a Runner that is not open adopts
// nothing, so a publish naming it is served as any other.
func TestClosedRunnerLeavesWorkToWorkers(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	r := newRelay(t, d)
	sub, err := d.Subscribe(Caller{Capsule: "client", Principal: "alice"}, "done", true)
	if err != nil {
		t.Fatal(err)
	}
	rn := d.NewRunner() // never opened
	mustPublish(t, d, Caller{Capsule: "client", Principal: "alice", Runner: rn}, "req", `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := sub.Recv(ctx); err != nil {
		t.Fatalf("the relay never answered: %v", err)
	}
	if got, _ := r.ranOn.Load("first"); got == rn {
		t.Error("a closed runner was handed the call")
	}
}

// TestRunnerHandsOffOnClose: work adopted by a Runner whose owner closes it
// instead of running it is made by a worker; nothing is lost.
func TestRunnerHandsOffOnClose(t *testing.T) {
	for _, end := range []string{"Close", "HandOff"} {
		t.Run(end, func(t *testing.T) {
			d, _ := newTestDispatcher(t, Options{})
			newRelay(t, d)
			sub, err := d.Subscribe(Caller{Capsule: "client", Principal: "alice"}, "done", true)
			if err != nil {
				t.Fatal(err)
			}
			rn := d.NewRunner()
			rn.Open()
			mustPublish(t, d, Caller{Capsule: "client", Principal: "alice", Runner: rn}, "req", `{}`)
			if end == "Close" {
				rn.Close()
			} else {
				rn.HandOff()
				defer rn.Close()
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if _, err := sub.Recv(ctx); err != nil {
				t.Fatalf("adopted work was lost after %s: %v", end, err)
			}
		})
	}
}

// TestRunnerKeepsFanOutConcurrent: interceptors at one priority run
// concurrently (DESIGN §4b) even when the publisher offers to run them: the
// runner takes one, workers the rest. Each handler waits for the other, so
// running them one after another would never finish.
func TestRunnerKeepsFanOutConcurrent(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	meet := targetFunc(func(ctx context.Context, _ Invocation) (Verdict, error) {
		arrived.Done()
		select {
		case <-both:
			return Verdict{}, nil
		case <-time.After(waitLimit):
			return Verdict{}, context.DeadlineExceeded
		}
	})
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"fan"}}, continueTarget)
	register(t, d, interceptorACL("x", "fan", 100), meet)
	register(t, d, interceptorACL("y", "fan", 100), meet)
	rn := d.NewRunner()
	rn.Open()
	mustPublish(t, d, Caller{Capsule: "pub", Principal: "alice", Runner: rn}, "fan", `{}`)
	rn.Run()
	rn.Close()
	settle(t, d)
	if s := d.Stats(); s.Errors != 0 {
		t.Fatalf("the fan-out ran one after another (%d handlers gave up waiting for the other)", s.Errors)
	}
}

// TestAHandlerThatWaitsForItsOwnPublishIsNotDeadlocked: a handler publishes
// a request and waits for the reply. Its worker is a Runner and adopts the
// request's interceptor call; HandOff (which the host layer makes before any
// wait) gives it to a worker, so the wait ends.
func TestAHandlerThatWaitsForItsOwnPublishIsNotDeadlocked(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	replied := make(chan struct{})
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"start"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "asker", Publish: []string{"ask"}, Subscribe: []string{"start"}, Interceptors: []Interceptor{{Pattern: "start", Handler: "h", Priority: 100}}},
		targetFunc(func(ctx context.Context, inv Invocation) (Verdict, error) {
			rn := RunnerFrom(ctx)
			if rn == nil {
				return Verdict{}, context.Canceled // a worker must offer itself
			}
			if _, err := d.Publish(Caller{Capsule: "asker", Principal: inv.Principal, Runner: rn}, "ask", json.RawMessage(`{}`)); err != nil {
				return Verdict{}, err
			}
			rn.HandOff()
			select {
			case <-replied:
				return Verdict{}, nil
			case <-time.After(waitLimit):
				return Verdict{}, context.DeadlineExceeded
			}
		}))
	register(t, d, interceptorACL("answerer", "ask", 100), targetFunc(func(context.Context, Invocation) (Verdict, error) {
		close(replied)
		return Verdict{}, nil
	}))
	mustPublish(t, d, Caller{Capsule: "pub", Principal: "alice"}, "start", `{}`)
	testutil.WaitForRecv(t, waitLimit, "the request a handler published to be served while it waited", replied)
	settle(t, d)
	if s := d.Stats(); s.Errors != 0 {
		t.Fatalf("stats %+v: a handler failed", s)
	}
}

// TestRunnerKeepsQueueOrder: events for one (capsule, principal) are handled
// in publish order whether a runner or a worker makes each call.
func TestRunnerKeepsQueueOrder(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	rec := newRecorder()
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"single"}}, continueTarget)
	register(t, d, interceptorACL("one", "single", 100), rec.cont())
	rn := d.NewRunner()
	const n, batch = 200, 40 // batches stay below the queue depth: nothing is dropped
	var got, want []string
	for i := range n {
		c := Caller{Capsule: "pub", Principal: "alice"}
		if i%3 == 0 {
			rn.Open()
			c.Runner = rn
		}
		mustPublish(t, d, c, "single", strconv.Itoa(i))
		if i%3 == 0 {
			rn.Run()
			rn.Close()
		}
		if i%batch == batch-1 {
			for _, c := range rec.wait(t, batch) {
				got = append(got, c.payload)
			}
		}
	}
	for i := range n {
		want = append(want, strconv.Itoa(i))
	}
	if s := d.Stats(); s.QueueDrops != 0 {
		t.Fatalf("%d calls dropped", s.QueueDrops)
	}
	if !slices.Equal(got, want) {
		t.Errorf("calls out of publish order: %v", got)
	}
}

// TestAWorkersQueueDoesNotWaitBehindItsRelay: a queue worker whose call's
// publish left it a relay to run gives its own queue up first, so a later
// message for its capsule (a cancel of the very call being relayed) is
// made while the relayed call still runs, not after it.
func TestAWorkersQueueDoesNotWaitBehindItsRelay(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	release, relaying := make(chan struct{}), make(chan struct{})
	secondHeard := make(chan string, 2)
	// "first" publishes "mid" for the first message only; "second" holds
	// the relay until released; the second message for "first" must get
	// through meanwhile.
	var firstCalls atomic.Int64
	register(t, d, CapsuleACL{ID: "client", Publish: []string{"req"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "first", Publish: []string{"mid"}, Subscribe: []string{"req"}, Interceptors: []Interceptor{{Pattern: "req", Handler: "h", Priority: 100}}},
		targetFunc(func(ctx context.Context, inv Invocation) (Verdict, error) {
			if firstCalls.Add(1) == 1 {
				_, err := d.Publish(Caller{Capsule: "first", Principal: inv.Principal, Runner: RunnerFrom(ctx)}, "mid", json.RawMessage(`{}`))
				return Verdict{}, err
			}
			secondHeard <- "first heard the second message"
			return Verdict{}, nil
		}))
	register(t, d, CapsuleACL{ID: "second", Subscribe: []string{"mid"}, Interceptors: []Interceptor{{Pattern: "mid", Handler: "h", Priority: 100}}},
		targetFunc(func(ctx context.Context, _ Invocation) (Verdict, error) {
			if RunnerFrom(ctx) == nil {
				t.Error("the relayed call was not made by a Runner")
			}
			close(relaying)
			<-release
			return Verdict{}, nil
		}))
	client := Caller{Capsule: "client", Principal: "alice"}
	mustPublish(t, d, client, "req", `{}`)
	// The second message goes out once the relay holds the goroutine, so
	// it finds "first"'s queue empty of all but itself.
	<-relaying
	mustPublish(t, d, client, "req", `{}`)
	testutil.WaitForRecv(t, waitLimit, "the second message, not behind the relayed call", secondHeard)
	close(release)
	settle(t, d)
}
