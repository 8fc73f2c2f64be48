package approval

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// handleTick refuses every open question of the tick's principal whose
// deadline has passed. The kernel ticks once per principal it has seen, as
// that principal, so each principal's questions are reached in its own KV.
func handleTick(c *sdk.Call) error {
	if c.SourceID() != ipc.KernelSourceID {
		return nil
	}
	keys, err := c.KVList(pendingPrefix)
	if err != nil {
		return err
	}
	now := c.Now().UnixNano()
	var firstErr error
	for _, key := range keys {
		id := strings.TrimPrefix(key, pendingPrefix)
		p, ok, err := loadPending(c, id)
		if err != nil {
			// A record that does not decode can never be answered: drop it.
			c.Log(hostapi.LogWarn, "approval: dropped "+err.Error())
			if err := c.KVDelete(key); err != nil {
				c.Log(hostapi.LogWarn, fmt.Sprintf("approval: record %s not deleted: %v", key, err))
			}
			continue
		}
		if !ok || now < p.Deadline {
			continue
		}
		if err := settle(c, id, p.CallID); err != nil {
			return err
		}
		// Refused either way: a chain that cannot take the lapse is logged.
		if err := c.AuditRecord(hostapi.AuditRecord{
			Kind: hostapi.AuditApprovalAnswered, Capsule: p.Capsule, Subject: p.Tool, Outcome: "lapsed",
			Detail: map[string]string{"request_id": id, "call_id": clip(p.CallID, 128)},
		}); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("approval: the lapse of %s not recorded in the audit chain: %v", id, err))
		}
		msg := fmt.Sprintf("%s was not approved by the user: no answer within %s s", p.Tool, formatSecs(p.TimeoutSecs))
		if err := refuse(c, p.CallID, p.Tool, msg); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	c.Continue(nil)
	return firstErr
}

// handleCancel withdraws the questions of cancelled calls: the caller has
// given up on them, so a later approval must run nothing. No result is
// published; whoever cancelled already ended the call on its side.
func handleCancel(c *sdk.Call) error {
	var req ipc.ToolCancelRequest
	if err := json.Unmarshal(c.Payload(), &req); err != nil {
		return nil
	}
	for _, callID := range req.CallIDs {
		if checkCallID(callID) != nil {
			continue
		}
		id, ok, err := c.KVGet(callPrefix + callID)
		if err != nil {
			return err
		}
		// A pass not yet spent is turned into a stop: the re-publish it
		// was for, still queued, is then dropped instead of running.
		if _, pass, err := c.KVGet(passPrefix + callID); err != nil {
			return err
		} else if pass {
			if err := c.KVSet(passPrefix+callID, []byte(cancelledPass)); err != nil {
				return err
			}
		}
		if !ok {
			continue
		}
		if err := settle(c, string(id), callID); err != nil {
			return err
		}
		c.Log(hostapi.LogInfo, fmt.Sprintf("approval: question %s withdrawn: call %q was cancelled", id, callID))
	}
	return nil
}
