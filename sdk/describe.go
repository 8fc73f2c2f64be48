package sdk

import (
	"encoding/json"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// DescribedTool is one tool in a Catalogue: what its capsule's describe
// answer said (with the kernel's corrections from the capsule's manifest:
// the operator-reviewed description_for_llm, and mutable if either says
// so) and which capsule answered.
type DescribedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Mutable     bool            `json:"mutable"`
	// AsksApproval: the tool asks the person itself, per call (the
	// capsule's manifest says so; the kernel stamps it, never the code).
	AsksApproval bool   `json:"asks_approval,omitempty"`
	Capsule      string `json:"capsule"`
	// Host is the host the answer came from, empty for this host's own
	// capsules (hostapi.Message.Host: the receiving host's word, never
	// the answering capsule's).
	Host string `json:"host,omitempty"`
}

// Catalogue is what a describe fan-out collected.
type Catalogue struct {
	// Tools are sorted in the dispatch order of the capsules that
	// answered (this host's, then other hosts'), each capsule's in its own
	// order; a name is kept once, from the first capsule (the kernel lets
	// only one capsule of a host provide a tool, so a second is a stale
	// answer, or another host's provider of a tool this host has).
	Tools []DescribedTool `json:"tools"`
	// Missing lists the capsules that intercept the describe topic but did
	// not answer within the window, in dispatch order.
	Missing []string `json:"missing,omitempty"`
	// Responders lists every capsule that was asked, in dispatch order
	// (the capsule set a cache of the catalogue is valid for).
	Responders []string `json:"responders"`
	// ScopeBound says a capsule that answered serves only some request
	// scopes (a session's own MCP servers): the catalogue is this
	// scope's, and a cache of it would offer its tools to other scopes.
	ScopeBound bool `json:"scope_bound,omitempty"`
}

// DescribeTools runs the describe fan-out (seed 000): it asks every capsule
// intercepting tool.v1.request.describe for its tools and returns as soon as
// each has answered, or when window has passed. The calling capsule's
// manifest must grant publishing tool.v1.request.describe and subscribing to
// tool.v1.response.describe.* (declare them with Publishes and Subscribes).
// The caller itself is not waited for: its own describe handler cannot run
// while it is in a call.
func DescribeTools(c *Call, window time.Duration) (Catalogue, error) {
	var cat Catalogue
	responders, err := c.Interceptors(ipc.ToolRequestDescribeTopic)
	if err != nil {
		return cat, err
	}
	self := c.CapsuleID()
	waiting := map[string]bool{}
	for _, id := range responders {
		if id != self && !waiting[id] {
			waiting[id] = true
			cat.Responders = append(cat.Responders, id)
		}
	}
	if len(waiting) == 0 {
		return cat, nil
	}
	sub, err := c.Subscribe(ipc.ToolDescribeResponsePattern)
	if err != nil {
		return cat, err
	}
	defer func() { _ = c.Unsubscribe(sub) }()
	if err := c.Publish(ipc.ToolRequestDescribeTopic, []byte(`{}`)); err != nil {
		return cat, err
	}
	answers := map[string][]ipc.ToolDescriptor{}
	hosts := map[string]string{}
	missing, err := Gather(c, sub, cat.Responders, window, func(msg hostapi.Message, awaited bool) bool {
		src := msg.SourceID
		if !awaited || msg.Topic != ipc.ToolDescribeResponseTopic(src) {
			return false
		}
		resp, err := ipc.ParseToolDescribeResponse(msg.Payload)
		if err != nil {
			c.Log(hostapi.LogWarn, "describe: capsule "+src+" answered without a tools list: "+err.Error())
			return true
		}
		answers[src], hosts[src] = resp.Tools, msg.Host
		cat.ScopeBound = cat.ScopeBound || resp.ScopeBound
		return true
	})
	if err != nil {
		return cat, err
	}
	cat.Missing = missing
	seen := map[string]bool{}
	for _, id := range cat.Responders {
		for _, t := range answers[id] {
			if t.Name != "" && seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			cat.Tools = append(cat.Tools, DescribedTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Mutable: t.Mutable, AsksApproval: t.AsksApproval, Capsule: id, Host: hosts[id]})
		}
	}
	return cat, nil
}
