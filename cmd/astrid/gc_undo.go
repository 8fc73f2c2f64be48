package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/astrid-go/astrid/capsules/undo"
	"github.com/astrid-go/astrid/internal/store"
)

// undoGoneWait bounds how long gc waits for the undo capsule to drop a
// deleted session's snapshots: it does so on the session store's
// session.v1.event.deleted, after the delete is answered, so gc would
// otherwise stop the kernel before the event is handled.
const undoGoneWait = 10 * time.Second

// undoKept is what the undo capsule keeps for a session of a principal
// (capsules/undo's KV layout: turn/<session>/<seq> records, one a turn
// that changed files, and blob/<session>/<sha-256> prior contents).
type undoKept struct {
	turns int
	bytes int64
}

func (u undoKept) String() string {
	if u.turns == 0 {
		return "no undo snapshots"
	}
	noun := "undo snapshots"
	if u.turns == 1 {
		noun = "undo snapshot"
	}
	return fmt.Sprintf("%d %s, %s", u.turns, noun, byteSize(u.bytes))
}

// undoKeptFor reads, without changing anything, what the undo capsule
// keeps for session of principal in st.
func undoKeptFor(st *store.Store, principal, session string) (undoKept, error) {
	kv := st.KV(principal, undo.ID)
	var u undoKept
	for _, prefix := range []string{"turn/", "blob/"} {
		keys, err := kv.List(prefix + session + "/")
		if err != nil {
			return u, fmt.Errorf("undo snapshots of session %s of %s: %w", session, principal, err)
		}
		for _, key := range keys {
			v, ok, err := kv.Get(key)
			if err != nil {
				return u, fmt.Errorf("undo snapshots of session %s of %s: %w", session, principal, err)
			}
			if !ok {
				continue // dropped between the list and the read
			}
			u.bytes += int64(len(v))
			if strings.HasPrefix(key, "turn/") {
				u.turns++
			}
		}
	}
	return u, nil
}

// waitUndoGone waits until the undo capsule has dropped what it kept for
// a session the store deleted, polling the store: the capsule signals
// nothing when it is done, and its handler is a few KV deletes.
func waitUndoGone(ctx context.Context, st *store.Store, principal, session string) error {
	ctx, cancel := context.WithTimeout(ctx, undoGoneWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		u, err := undoKeptFor(st, principal, session)
		if err != nil {
			return err
		}
		if u.turns == 0 && u.bytes == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("session %s of %s was deleted, but its %s are still kept after %s (the undo capsule did not drop them): %w", session, principal, u, undoGoneWait, ctx.Err())
		case <-tick.C:
		}
	}
}
