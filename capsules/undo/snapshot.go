package undo

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// fromAgent reports whether the event being handled came from the agent
// loop (a capsule that intercepts user.v1.prompt): only its tool events
// tie a call to a session.
func fromAgent(c *sdk.Call) bool {
	agents, err := c.Interceptors(ipc.UserPromptTopic)
	return err == nil && slices.Contains(agents, c.SourceID())
}

// handleToolStarted ties a call to its session and turn (the agent
// announces a call before it sends it), and marks a turn that runs a shell
// command.
func handleToolStarted(c *sdk.Call) error {
	var ev ipc.AgentToolStarted
	if json.Unmarshal(c.Payload(), &ev) != nil || ev.CallID == "" || !fromAgent(c) || !ipc.ValidSessionID(ev.SessionID) || ev.TurnID == "" {
		return nil
	}
	if unreachable[ev.Name] {
		r, err := turnOf(c, ev.SessionID, ev.TurnID)
		if err != nil {
			return err
		}
		if !r.Shell {
			r.Shell = true
			return saveTurn(c, ev.SessionID, r)
		}
		return nil
	}
	if _, ok := tracked[ev.Name]; !ok {
		return nil
	}
	raw, err := json.Marshal(callRecord{Session: ev.SessionID, TurnID: ev.TurnID})
	if err != nil {
		return err
	}
	return c.KVSet(callPrefix+ev.CallID, raw)
}

// handleToolRequest keeps, before a tracked call of a session's turn
// runs, the prior content of each file it may change that the turn has not
// changed yet. It never holds a call up: whatever fails here is logged,
// and the call goes on (its undo then says what was not kept).
func handleToolRequest(c *sdk.Call) error {
	var req ipc.ToolExecuteRequest
	if err := req.UnmarshalJSON(c.Payload()); err != nil || req.CallID == "" {
		return nil
	}
	names, ok := tracked[req.ToolName]
	if !ok {
		return nil
	}
	raw, ok, err := c.KVGet(callPrefix + req.CallID)
	if err != nil || !ok {
		return nil // not a call of an agent turn: nothing to undo it by
	}
	var call callRecord
	if json.Unmarshal(raw, &call) != nil {
		return nil
	}
	var args map[string]any
	if json.Unmarshal(req.Arguments, &args) != nil {
		return nil
	}
	call.Paths = call.Paths[:0]
	for _, n := range names {
		if p, ok := args[n].(string); ok && p != "" {
			call.Paths = append(call.Paths, p)
		}
	}
	if err := keepBefore(c, call); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("undo: call %q of %s: prior content not kept: %v", req.CallID, req.ToolName, err))
	}
	if raw, err = json.Marshal(call); err == nil {
		err = c.KVSet(callPrefix+req.CallID, raw)
	}
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("undo: call %q: %v", req.CallID, err))
	}
	return nil
}

// keepBefore records, for each of call's paths its turn has not touched,
// what is there now, keeping the content.
func keepBefore(c *sdk.Call, call callRecord) error {
	r, err := turnOf(c, call.Session, call.TurnID)
	if err != nil {
		return err
	}
	all, err := turns(c, call.Session)
	if err != nil {
		return err
	}
	kept := keptBytes(all)
	changed := false
	for _, p := range call.Paths {
		if slices.ContainsFunc(r.Files, func(f fileRecord) bool { return f.Path == p }) {
			continue
		}
		st, size, data, err := state(c, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		f := fileRecord{Path: p, Before: st, Size: size}
		if isHash(st) {
			switch {
			case size > MaxFileBytes:
				f.Before = tooLarge
			case kept+size > MaxSessionBytes:
				f.Before = tooLarge
				c.Log(hostapi.LogWarn, fmt.Sprintf("undo: session %q keeps %d MiB of prior contents already; %s's is not kept", call.Session, MaxSessionBytes>>20, p))
			default:
				key := blobPrefix + call.Session + "/" + st
				if _, ok, err := c.KVGet(key); err != nil {
					return err
				} else if !ok {
					if err := c.KVSet(key, data); err != nil {
						return fmt.Errorf("keep %s: %w", p, err)
					}
					kept += size
				}
			}
		}
		r.Files = append(r.Files, f)
		changed = true
	}
	if !changed {
		return nil
	}
	return saveTurn(c, call.Session, r)
}

// handleToolFinished records what a tracked call left at its paths, so an
// undo can tell a file changed since.
func handleToolFinished(c *sdk.Call) error {
	var ev ipc.AgentToolFinished
	if json.Unmarshal(c.Payload(), &ev) != nil || ev.CallID == "" || !fromAgent(c) {
		return nil
	}
	raw, ok, err := c.KVGet(callPrefix + ev.CallID)
	if err != nil || !ok {
		return nil
	}
	// A record left behind is volatile and keyed by a call id that never
	// comes again: it costs a key until the kernel restarts, nothing more.
	_ = c.KVDelete(callPrefix + ev.CallID)
	var call callRecord
	if json.Unmarshal(raw, &call) != nil || len(call.Paths) == 0 {
		return nil
	}
	r, err := turnOf(c, call.Session, call.TurnID)
	if err != nil {
		return err
	}
	for _, p := range call.Paths {
		st, _, _, err := state(c, p)
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("undo: %s after call %q: %v", p, ev.CallID, err))
			st = unknown
		}
		for i := range r.Files {
			if r.Files[i].Path == p {
				r.Files[i].After = st
			}
		}
	}
	return saveTurn(c, call.Session, r)
}
