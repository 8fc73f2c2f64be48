package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

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

// allowValue is an allowance's stored value: the decision and when it was
// given. Values written before held only the decision; allowed reads the
// key alone, so both count.
type allowValue struct {
	Decision string    `json:"decision"`
	Since    time.Time `json:"since"`
}

// allow records decision's allowance, if it keeps one.
func allow(c *sdk.Call, decision, capsule, tool string) error {
	prefix := ""
	switch decision {
	case ipc.DecisionApproveSession:
		prefix = sessionAllowPrefix
	case ipc.DecisionApproveAlways:
		prefix = alwaysAllowPrefix
	default:
		return nil
	}
	v, err := json.Marshal(allowValue{Decision: decision, Since: c.Now().UTC()})
	if err != nil {
		return err
	}
	return c.KVSet(allowKey(prefix, capsule, tool), v)
}

// AllowancePrefixes are the key prefixes, in this capsule's store of each
// principal, of the allowances it keeps: "this session" (volatile) and
// "always" (durable). The kernel's `astrid approvals` lists them with
// ReadAllowance and revokes one by deleting its key: the next call of that
// tool is asked about again.
var AllowancePrefixes = []string{sessionAllowPrefix, alwaysAllowPrefix}

// Allowance is one allowance this layer keeps, read back from its key and
// value (ReadAllowance).
type Allowance struct {
	// Session: "this session" (until the kernel process stops); else
	// "always".
	Session bool
	// Capsule provides Tool; the person allowed that capsule's tool.
	Capsule, Tool string
	// Since is when it was given; zero when its value predates the
	// time being kept.
	Since time.Time
}

// ReadAllowance reads the allowance stored under key, a key listed under
// one of AllowancePrefixes; ok is false for a key that is none.
func ReadAllowance(key string, value []byte) (a Allowance, ok bool) {
	rest, session := strings.CutPrefix(key, sessionAllowPrefix)
	if !session {
		if rest, ok = strings.CutPrefix(key, alwaysAllowPrefix); !ok {
			return Allowance{}, false
		}
	}
	capsule, tool, found := strings.Cut(rest, "/")
	if !found || capsule == "" || tool == "" {
		return Allowance{}, false
	}
	a = Allowance{Session: session, Capsule: capsule, Tool: tool}
	var v allowValue
	if len(value) > 0 && value[0] == '{' && json.Unmarshal(value, &v) == nil {
		a.Since = v.Since
	}
	return a, true
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
