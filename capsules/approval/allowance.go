package approval

import (
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// An allowance is kept per (providing capsule, tool), which is what the
// person was shown (the reason names both): a tool of the same name that
// another capsule provides later is asked about again. A capsule id and a
// tool name are both free of '/', so the key is unambiguous.
const (
	// sessionAllowPrefix: volatile, for the life of this kernel process.
	sessionAllowPrefix = "~allow/"
	// alwaysAllowPrefix: durable, survives a restart.
	alwaysAllowPrefix = "allow/"
)

func allowKey(prefix, capsule, tool string) string { return prefix + capsule + "/" + tool }

// allowed reports whether the principal allowed capsule's tool for the
// session or always.
func allowed(c *sdk.Call, capsule, tool string) (bool, error) {
	for _, prefix := range []string{sessionAllowPrefix, alwaysAllowPrefix} {
		_, ok, err := c.KVGet(allowKey(prefix, capsule, tool))
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// allow records decision's allowance, if it keeps one.
func allow(c *sdk.Call, decision, capsule, tool string) error {
	switch decision {
	case ipc.DecisionApproveSession:
		return c.KVSet(allowKey(sessionAllowPrefix, capsule, tool), []byte(decision))
	case ipc.DecisionApproveAlways:
		return c.KVSet(allowKey(alwaysAllowPrefix, capsule, tool), []byte(decision))
	}
	return nil
}

// AlwaysAllowedPrefix is the key prefix, in this capsule's store of each
// principal, of the durable allowances given to capsule's tools. `astrid
// capsule remove` clears it: an "always" was given to the code the person
// saw, and a capsule installed again under the same id is asked about anew.
func AlwaysAllowedPrefix(capsule string) string { return alwaysAllowPrefix + capsule + "/" }
