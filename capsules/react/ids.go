package react

import (
	"strconv"

	"github.com/astrid-go/astrid/sdk"
)

// newID mints an id for a request, a call or a session round trip: prefix,
// the host clock in nanoseconds and a per-principal counter, all in base 36,
// joined by '_' (so it is a valid topic segment and KV key part). Call ids
// also carry the principal, since the kernel's cancel keys are shared by
// every principal. It is unique within the kernel, not secret (a capsule
// has no source of randomness; docs/rationale/agent.md).
func newID(c *sdk.Call, prefix string) string {
	var n uint64
	if raw, ok, err := c.KVGet(keySeq); err == nil && ok {
		n, _ = strconv.ParseUint(string(raw), 36, 64)
	}
	n++
	// A sequence not kept only repeats a number next time: the id also
	// holds the clock's nanoseconds, so it stays unique.
	_ = c.KVSet(keySeq, []byte(strconv.FormatUint(n, 36)))
	return prefix + "_" + strconv.FormatInt(c.Now().UnixNano(), 36) + "_" + strconv.FormatUint(n, 36)
}

// newCallID mints a tool call's id on the bus.
func newCallID(c *sdk.Call) string {
	return newID(c, "call_"+c.Principal())
}

// validID reports whether s is a session or turn id: 1 to 64 ASCII
// letters, digits, '-' or '_' (the session store's rule, and one topic
// segment).
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}
