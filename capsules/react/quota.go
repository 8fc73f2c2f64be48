package react

import (
	"fmt"
	"strconv"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// An agent created with --tokens-per-day (hostapi.AgentPolicy) may use
// that many LLM tokens (input and output) per UTC day. The count is kept
// in the principal's KV, one durable key a day, and only for a principal
// with such a limit (a durable write per model request costs a disk
// write).

// dayKey is the KV key of the tokens counted on the UTC day of c's clock.
func dayKey(c *sdk.Call) string { return "tokens/" + c.Now().UTC().Format("2006-01-02") }

// tokensUsedToday reads the day's count; a value that does not read is
// counted as the limit reached by the caller (quotaRefusal).
func tokensUsedToday(c *sdk.Call) (int64, error) {
	raw, ok, err := c.KVGet(dayKey(c))
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("the count of today's tokens (%s) does not read: %q", dayKey(c), raw)
	}
	return n, nil
}

// quotaRefusal is why the principal's next model request must not be
// sent (its tokens for today are used up, or cannot be counted), or "".
func quotaRefusal(c *sdk.Call) string {
	policy, err := c.AgentPolicy()
	if err != nil {
		return fmt.Sprintf("The model was not asked: the limits of principal %s could not be read: %v.", c.Principal(), err)
	}
	if policy.TokensPerDay <= 0 {
		return ""
	}
	used, err := tokensUsedToday(c)
	if err != nil {
		why := "The model was not asked: " + err.Error() + "."
		auditQuota(c, policy.TokensPerDay, -1, why)
		return why
	}
	if used >= policy.TokensPerDay {
		why := fmt.Sprintf("The model was not asked: agent %s has used %d LLM tokens today, its limit (tokens_per_day %d); it resets at 00:00 UTC.", c.Principal(), used, policy.TokensPerDay)
		auditQuota(c, policy.TokensPerDay, used, why)
		return why
	}
	return ""
}

// auditQuota records the refusal in the principal's audit chain, naming
// the limit (the host keeps at most one such entry a second). A refusal
// not recorded is logged: the model is not asked either way.
func auditQuota(c *sdk.Call, limit, used int64, why string) {
	d := map[string]string{"limit": strconv.FormatInt(limit, 10), "reason": why}
	if used >= 0 {
		d["used"] = strconv.FormatInt(used, 10)
	}
	if err := c.AuditRecord(hostapi.AuditRecord{Kind: hostapi.AuditQuotaRefused, Subject: "tokens_per_day", Detail: d}); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: the quota refusal of principal %s was not audited: %v", c.Principal(), err))
	}
}

// countTokens adds a model request's usage to the day's count of a
// principal with a daily limit. A count not kept is logged: the request
// has already been answered.
func countTokens(c *sdk.Call, u ipc.Usage) {
	policy, err := c.AgentPolicy()
	if err != nil || policy.TokensPerDay <= 0 {
		return
	}
	used, err := tokensUsedToday(c)
	if err == nil {
		add := min(u.InputTokens, 1<<40) + min(u.OutputTokens, 1<<40)
		err = c.KVSet(dayKey(c), []byte(strconv.FormatInt(used+int64(add), 10)))
	}
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: the tokens of principal %s were not counted: %v", c.Principal(), err))
	}
}
