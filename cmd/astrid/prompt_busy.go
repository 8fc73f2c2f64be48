package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// Backoff between sending a prompt the agent did not take and sending it
// again: from busyFirstWait, doubling, at most busyMaxWait, each with up
// to half of it added at random so that a burst of clients does not come
// back at the same instant.
const (
	busyFirstWait = 50 * time.Millisecond
	busyMaxWait   = 2 * time.Second
)

// runUntilTaken runs a turn with run, and runs it again while the agent
// answers that it did not take the prompt (ipc.OutcomeBusy: its queue for
// this principal was full, nothing ran) or the kernel did not admit the
// prompt now (notTakenNow), until ctx ends. It says once on
// stderr that it waits. It returns the last turn's final response: busy
// only when ctx ended first.
func runUntilTaken(ctx context.Context, stderr io.Writer, run func() (ipc.AgentResponse, error)) (ipc.AgentResponse, error) {
	wait := busyFirstWait
	for attempt := 0; ; attempt++ {
		final, err := run()
		switch {
		case notTakenNow(err):
			final = ipc.AgentResponse{IsFinal: true, Outcome: ipc.OutcomeBusy, Text: "The prompt was not sent: " + err.Error()}
		case err != nil || final.Outcome != ipc.OutcomeBusy:
			return final, err
		}
		if attempt == 0 {
			fmt.Fprintln(stderr, "astrid: the agent is busy with this principal's other turns; sending the prompt again until it is taken (--timeout)")
		}
		jittered := wait + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return final, nil
		case <-time.After(jittered):
		}
		wait = min(2*wait, busyMaxWait)
	}
}

// notTakenNow reports whether err is the kernel declining to take the
// prompt at this moment — the principal's CPU budget or publish rate, in
// process or through the daemon (daemonclient.Error.Is) — so that nothing
// was published and sending it again later may pass.
func notTakenNow(err error) bool {
	return errors.Is(err, dispatch.ErrNotAdmitted) || errors.Is(err, dispatch.ErrRateLimited)
}
