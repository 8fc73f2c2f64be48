package host

import (
	"encoding/json"

	"github.com/astrid-go/astrid/ipc"
)

// stampDescribe applies the capsule's manifest [[tool]] entries to its own
// describe answer (seed 003): the model is shown the operator-reviewed
// description_for_llm, not whatever the code says, and a tool is mutable
// if either the manifest or the code says so, so that a capsule cannot talk
// its way past an approval layer. Tools the manifest does not list are left
// as the code described them, except asks_approval: it is the manifest's
// word alone (false for a tool it does not list), since it tells an
// approval layer not to ask, and only the operator-reviewed manifest may
// say that. Every describe answer is therefore stamped, even a capsule's
// without [[tool]] entries. A payload that does not parse as a describe
// answer is passed on unchanged; its readers refuse it (they parse it with
// the same function).
func (c *Capsule) stampDescribe(payload []byte) []byte {
	resp, err := ipc.ParseToolDescribeResponse(payload)
	if err != nil {
		return payload
	}
	for i := range resp.Tools {
		t := &resp.Tools[i]
		m, ok := c.tools[t.Name]
		t.AsksApproval = ok && m.AsksApproval
		// Which host serves the tool is the receiving host's word
		// (ipc.StampToolHost), never a capsule's.
		t.Host = ""
		if !ok {
			continue
		}
		if m.DescriptionForLLM != "" {
			t.Description = m.DescriptionForLLM
		}
		t.Mutable = t.Mutable || m.Mutable
	}
	out, err := json.Marshal(resp)
	if err != nil {
		c.log.Warn("describe answer not stamped", "err", err)
		return payload
	}
	return out
}
