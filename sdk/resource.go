package sdk

import (
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

// Handler names the sdk binds for the resource and prompt conventions.
const (
	ResourceDescribeHandler = "resource_describe"
	ResourceReadHandler     = "resource_read"
	PromptDescribeHandler   = "prompt_describe"
	PromptGetHandler        = "prompt_get"
	CompletionHandler       = "complete"
)

// ownTopic stands for the capsule's id in a topic bound before the id is
// known (the read and get topics are the capsule's own); Registrations
// fills it in.
const ownTopic = "*"

// Resources serves the resource convention (ipc/resource.go) on c, which
// `astrid mcp serve` offers as MCP resources: describe answers the
// describe fan-out (the capsule's resources and templates), read answers a
// read of one URI, asked of this capsule alone. A read answers its error's
// text, or NotFound set by read for a URI the capsule has not. It binds
// resource_describe on resource.v1.request.describe and resource_read on
// resource.v1.read.<capsule id>.
func Resources(c *Capsule, describe func(*Call) (ipc.ResourceDescribeResponse, error), read func(*Call, string) (ipc.ResourceReadResult, error)) {
	c.Handle(ipc.ResourceRequestDescribeTopic, ResourceDescribeHandler, func(call *Call) error {
		resp, err := describe(call)
		if err != nil {
			return fmt.Errorf("describing resources: %w", err)
		}
		return call.PublishJSON(ipc.ResourceDescribeResponseTopic(call.CapsuleID()), resp)
	})
	c.Handle(ipc.ResourceReadTopic(ownTopic), ResourceReadHandler, func(call *Call) error {
		var req ipc.ResourceReadRequest
		if err := call.Decode(&req); err != nil {
			return call.ReplyJSON(ipc.ResourceReadResult{Error: "the read request does not decode: " + err.Error()})
		}
		res, err := read(call, req.URI)
		if err != nil {
			res = ipc.ResourceReadResult{Error: err.Error()}
		}
		res.RequestID = req.RequestID
		return call.ReplyJSON(res)
	})
	c.resources = true
}

// ResourceChanged tells the subscribers of uri, one of the capsule's
// resources, that it changed (resource.v1.updated.<capsule id>).
func (c *Call) ResourceChanged(uri string) error {
	return c.PublishJSON(ipc.ResourceUpdatedTopic(c.CapsuleID()), ipc.ResourceUpdated{URI: uri})
}

// Prompts serves the prompt convention (ipc/prompt.go) on c, which
// `astrid mcp serve` offers as MCP prompts: describe answers the describe
// fan-out, get fills in one prompt, asked of this capsule alone (the
// server checked the arguments against the description first). A get
// answers its error's text, or NotFound set by get. It binds
// prompt_describe on prompt.v1.request.describe and prompt_get on
// prompt.v1.get.<capsule id>.
func Prompts(c *Capsule, describe func(*Call) (ipc.PromptDescribeResponse, error), get func(*Call, ipc.PromptGetRequest) (ipc.PromptGetResult, error)) {
	c.Handle(ipc.PromptRequestDescribeTopic, PromptDescribeHandler, func(call *Call) error {
		resp, err := describe(call)
		if err != nil {
			return fmt.Errorf("describing prompts: %w", err)
		}
		return call.PublishJSON(ipc.PromptDescribeResponseTopic(call.CapsuleID()), resp)
	})
	c.Handle(ipc.PromptGetTopic(ownTopic), PromptGetHandler, func(call *Call) error {
		var req ipc.PromptGetRequest
		if err := call.Decode(&req); err != nil {
			return call.ReplyJSON(ipc.PromptGetResult{Error: "the get request does not decode: " + err.Error()})
		}
		res, err := get(call, req)
		if err != nil {
			res = ipc.PromptGetResult{Error: err.Error()}
		}
		res.RequestID = req.RequestID
		return call.ReplyJSON(res)
	})
	c.prompts = true
}

// Completions serves the completion convention (ipc/completion.go) on c:
// complete answers for the prompt arguments and template variables c's
// descriptions mark Complete (those with declared Values are completed
// from them without asking). It binds complete on
// completion.v1.complete.<capsule id>.
func Completions(c *Capsule, complete func(*Call, ipc.CompletionRequest) (ipc.CompletionResult, error)) {
	c.Handle(ipc.CompletionTopic(ownTopic), CompletionHandler, func(call *Call) error {
		var req ipc.CompletionRequest
		if err := call.Decode(&req); err != nil {
			return call.ReplyJSON(ipc.CompletionResult{Error: "the completion request does not decode: " + err.Error()})
		}
		res, err := complete(call, req)
		if err != nil {
			res = ipc.CompletionResult{Error: err.Error()}
		}
		res.RequestID = req.RequestID
		return call.ReplyJSON(res)
	})
	c.completions = true
}

// ownRegistrations fills the capsule's id into the read and get topics and
// adds the conventions' answer topics.
func (c *Capsule) ownRegistrations(capsuleID string, r *Registrations) {
	for i, b := range r.Interceptors {
		switch b.Pattern {
		case ipc.ResourceReadTopic(ownTopic):
			r.Interceptors[i].Pattern = ipc.ResourceReadTopic(capsuleID)
		case ipc.PromptGetTopic(ownTopic):
			r.Interceptors[i].Pattern = ipc.PromptGetTopic(capsuleID)
		case ipc.CompletionTopic(ownTopic):
			r.Interceptors[i].Pattern = ipc.CompletionTopic(capsuleID)
		}
	}
	if c.resources {
		r.Publish = append(r.Publish, ipc.ResourceDescribeResponseTopic(capsuleID), ipc.ResourceReadResultTopic, ipc.ResourceUpdatedTopic(capsuleID))
	}
	if c.prompts {
		r.Publish = append(r.Publish, ipc.PromptDescribeResponseTopic(capsuleID), ipc.PromptGetResultTopic)
	}
	if c.completions {
		r.Publish = append(r.Publish, ipc.CompletionResultTopic)
	}
}
