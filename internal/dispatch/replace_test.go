package dispatch

import (
	"context"
	"errors"
	"testing"
)

// Replace swaps a capsule's registration: events from then on go to the new
// Target; a call the old one was running finishes there, uncancelled, and
// retire returns only after it has; a capsule not registered, or a closed
// dispatcher, is refused.
func TestReplaceSwapsAndLetsTheOldFinish(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"a.b"}}, continueTarget)
	pub := Caller{Capsule: "pub", Principal: "p"}
	release, running := make(chan struct{}), make(chan struct{})
	oldDone := make(chan error, 1)
	register(t, d, interceptorACL("svc", "a.b", 10), targetFunc(func(ctx context.Context, _ Invocation) (Verdict, error) {
		close(running)
		<-release
		oldDone <- ctx.Err()
		return Verdict{}, nil
	}))
	mustPublish(t, d, pub, "a.b", `{}`)
	<-running

	rec := newRecorder()
	retire, err := d.Replace(interceptorACL("svc", "a.b", 10), rec.cont())
	if err != nil {
		t.Fatal(err)
	}
	mustPublish(t, d, pub, "a.b", `{"n":2}`)
	if got := rec.wait(t, 1); got[0].payload != `{"n":2}` {
		t.Fatalf("the new target got %+v", got)
	}
	retired := make(chan struct{})
	go func() {
		retire()
		close(retired)
	}()
	select {
	case <-retired:
		t.Fatal("retire returned while the old target's call was running")
	default:
	}
	close(release)
	if err := <-oldDone; err != nil {
		t.Errorf("the old target's call was cancelled: %v", err)
	}
	<-retired

	if _, err := d.Replace(interceptorACL("nobody", "a.b", 10), continueTarget); !errors.Is(err, ErrUnknownCapsule) {
		t.Errorf("Replace of an unregistered capsule: %v", err)
	}
	d.Close()
	if _, err := d.Replace(interceptorACL("svc", "a.b", 10), continueTarget); !errors.Is(err, ErrClosed) {
		t.Errorf("Replace after Close: %v", err)
	}
}
