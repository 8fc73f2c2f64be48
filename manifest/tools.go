package manifest

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/ipc"
)

// ProvidedTools are the tools a capsule with this manifest provides, each
// once and sorted: its [[tool]] names and the tools whose topic
// tool.v1.execute.<name> one of its interceptors, or of extra (those an
// engine adds, such as an MCP server's tools), is exactly (DESIGN §4c). A
// wildcard interceptor names no tool: it is middleware. The runtime settles
// with it which capsule provides which tool, and an install checks it
// before copying; the kernel itself never reads a tool's topic.
func (m *Manifest) ProvidedTools(extra ...Interceptor) []string {
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, t := range m.Tools {
		add(t.Name)
	}
	for _, i := range append(m.Interceptors(), extra...) {
		name, _ := ipc.ToolNameFromExecuteTopic(i.Pattern)
		add(name)
	}
	slices.Sort(out)
	return out
}

// StampPublish is what the capsule id, loaded with this manifest, is taken
// to have published on topic: payload itself, except for its own describe
// answer (tool.v1.response.describe.<id>), which gets the manifest's
// [[tool]] word over the code's (seed 003). The model is shown the
// operator-reviewed description_for_llm, and a tool is mutable if either
// the manifest or the code says so, so that a capsule cannot talk its way
// past an approval layer. asks_approval is the manifest's word alone (false
// for a tool it does not list), since it tells an approval layer not to
// ask; so every describe answer is stamped, even a capsule's without
// [[tool]] entries. Which host serves a tool is the receiving host's word
// (ipc.StampToolHost), never a capsule's, so it is cleared. A payload that
// does not parse as a describe answer is passed on unchanged (its readers
// refuse it: they parse it with the same function); an error says only
// that the stamped answer could not be encoded, and payload is returned
// with it. The host applies it to every publish, so it must stay cheap for
// any other topic.
func (m *Manifest) StampPublish(id, topic string, payload []byte) ([]byte, error) {
	if topic != ipc.ToolDescribeResponseTopic(id) {
		return payload, nil
	}
	resp, err := ipc.ParseToolDescribeResponse(payload)
	if err != nil {
		return payload, nil
	}
	for i := range resp.Tools {
		t := &resp.Tools[i]
		j := slices.IndexFunc(m.Tools, func(mt Tool) bool { return mt.Name == t.Name })
		t.AsksApproval = j >= 0 && m.Tools[j].AsksApproval
		if j < 0 {
			continue
		}
		if d := m.Tools[j].DescriptionForLLM; d != "" {
			t.Description = d
		}
		t.Mutable = t.Mutable || m.Tools[j].Mutable
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return payload, fmt.Errorf("manifest: stamp the describe answer of capsule %s: %w", id, err)
	}
	return out, nil
}
