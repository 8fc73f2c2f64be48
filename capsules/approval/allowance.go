package approval

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
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

// forgetUnloaded drops the call's principal's session allowances given to
// capsules that the kernel's astrid.v1.capsules_loaded no longer lists: a
// capsule removed (astrid capsule remove, then the daemon's rescan) and
// installed again under the same id is asked about anew, as its "always"
// allowances are (AlwaysAllowedPrefix). A capsule that failed is still
// listed and keeps them. The kernel sends the event to each principal.
func forgetUnloaded(c *sdk.Call) {
	var loaded struct {
		Capsules []struct {
			ID string `json:"id"`
		} `json:"capsules"`
	}
	custom, ok := ipc.DecodePayload(c.Payload()).(ipc.Custom)
	if !ok || json.Unmarshal(custom.Data, &loaded) != nil {
		c.Log(hostapi.LogWarn, "approval: unreadable "+ipc.CapsulesLoadedTopic+"; session allowances kept")
		return
	}
	present := make(map[string]bool, len(loaded.Capsules))
	for _, l := range loaded.Capsules {
		present[l.ID] = true
	}
	keys, err := c.KVList(sessionAllowPrefix)
	if err != nil {
		c.Log(hostapi.LogWarn, "approval: session allowances not listed: "+err.Error())
		return
	}
	for _, key := range keys {
		capsule, _, _ := strings.Cut(strings.TrimPrefix(key, sessionAllowPrefix), "/")
		if present[capsule] {
			continue
		}
		if err := c.KVDelete(key); err != nil && hostapi.CodeOf(err) != hostapi.CodeNotFound {
			c.Log(hostapi.LogWarn, fmt.Sprintf("approval: session allowance %s of unloaded capsule %s not dropped: %v", key, capsule, err))
		}
	}
}
