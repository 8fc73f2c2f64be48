package host

import (
	"context"
	"sync"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// Cancels is the kernel's registry of cancel keys: a call registers its key
// (a tool call id) and a cancel request naming the key interrupts every call
// holding it.
type Cancels struct {
	mu   sync.Mutex
	next uint64
	// keys holds, per key, the calls registered under it. A key is almost
	// always one call's alone (a tool call id), so a short slice, not a map.
	keys map[string][]cancelEntry
	// early remembers the keys a principal's cancel request named
	// recently, with its cause: a call that registers such a key later
	// (the cancel overtook the request it cancels, which waited in a
	// queue) is cancelled as it registers instead of running on. Bounded
	// by maxEarly entries and earlyFor of age.
	early      map[earlyKey]earlyCancel
	earlyOrder []earlyKey
	now        func() time.Time
}

type earlyKey struct{ principal, key string }

type earlyCancel struct {
	at    time.Time
	cause error
}

// How many cancelled keys are remembered, and for how long.
const (
	maxEarly = 4096
	earlyFor = time.Minute
)

type cancelEntry struct {
	id        uint64
	principal string                  // whose call it is
	call      context.CancelCauseFunc // ends the call's context
}

// cancelBinding is one registration, to be undone with unbind.
type cancelBinding struct {
	key string
	id  uint64
}

// NewCancels returns an empty registry.
func NewCancels() *Cancels {
	return &Cancels{keys: map[string][]cancelEntry{}, early: map[earlyKey]earlyCancel{}, now: time.Now}
}

// ErrCancelled is the cause a cancelled call's context carries.
var ErrCancelled = context.Canceled

// register binds key to call; unbind undoes it.
func (c *Cancels) register(principal, key string, call context.CancelCauseFunc) cancelBinding {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	principal = orDefault(principal)
	c.keys[key] = append(c.keys[key], cancelEntry{id: c.next, principal: principal, call: call})
	if e, ok := c.early[earlyKey{principal, key}]; ok && c.now().Sub(e.at) < earlyFor {
		// Cancelled before it started: end it now (a CancelCauseFunc
		// does not block, so calling it under c.mu is safe).
		call(e.cause)
	}
	return cancelBinding{key: key, id: c.next}
}

// unbind removes the registration b; it is idempotent.
func (c *Cancels) unbind(b cancelBinding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries := c.keys[b.key]
	for i, e := range entries {
		if e.id == b.id {
			entries = append(entries[:i], entries[i+1:]...)
			break
		}
	}
	if len(entries) == 0 {
		delete(c.keys, b.key)
	} else {
		c.keys[b.key] = entries
	}
}

// Cancel interrupts every call holding one of keys, whoever it acts for,
// and returns how many. It is the kernel's own; a cancel request from the
// bus goes through CancelFor.
func (c *Cancels) Cancel(cause error, keys ...string) int {
	return c.cancel("", cause, keys)
}

// CancelFor interrupts the calls holding one of keys that act for
// principal ("" is the default principal) and returns how many: a call id
// is not a secret, so a principal must not be able to stop another's call
// by naming it.
func (c *Cancels) CancelFor(principal string, cause error, keys ...string) int {
	return c.cancel(orDefault(principal), cause, keys)
}

func orDefault(principal string) string {
	if principal == "" {
		return ipc.DefaultPrincipal
	}
	return principal
}

// cancel ends the calls of keys held for principal, or for anyone when
// principal is "".
func (c *Cancels) cancel(principal string, cause error, keys []string) int {
	c.mu.Lock()
	if principal != "" {
		for _, k := range keys {
			c.remember(earlyKey{principal, k}, cause)
		}
	}
	var calls []context.CancelCauseFunc
	for _, k := range keys {
		for _, e := range c.keys[k] {
			if principal == "" || e.principal == principal {
				calls = append(calls, e.call)
			}
		}
	}
	c.mu.Unlock()
	for _, call := range calls {
		call(cause)
	}
	return len(calls)
}

// remember records that k was cancelled now, forgetting the oldest record
// past maxEarly. c.mu must be held.
func (c *Cancels) remember(k earlyKey, cause error) {
	if _, seen := c.early[k]; !seen {
		if len(c.earlyOrder) >= maxEarly {
			delete(c.early, c.earlyOrder[0])
			c.earlyOrder = c.earlyOrder[1:]
		}
		c.earlyOrder = append(c.earlyOrder, k)
	}
	c.early[k] = earlyCancel{at: c.now(), cause: cause}
}
