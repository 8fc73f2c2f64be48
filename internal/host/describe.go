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
// as the code described them. A payload that does not parse as a describe
// answer is passed on unchanged; its readers refuse it.
func (c *Capsule) stampDescribe(payload []byte) []byte {
	resp, err := ipc.ParseToolDescribeResponse(payload)
	if err != nil {
		return payload
	}
	for i := range resp.Tools {
		t := &resp.Tools[i]
		m, ok := c.tools[t.Name]
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
