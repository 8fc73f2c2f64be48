package mcp

//lint:file-ignore SA1019 sampling is deprecated by SEP-2577 (2026-07-28) but works through the deprecation window, and DESIGN §12 asks for it behind the operator's switch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// A server's sampling/createMessage (DESIGN §12, docs/rationale/mcp.md)
// is refused unless the operator listed the capsule under [mcp] sampling
// in config.toml. When it is listed, the request is approved like a tool
// call (the person sees the server, the messages' text, bounded, and the
// token bound) on behalf of the one call in flight on the server's
// session, and then runs on that principal's active model (the provider
// registry's answer) through the bus: an llm.v1.request.generate.<provider>
// request whose streamed text is the answer. The capsule's manifest must
// let it publish that request and read the provider's stream; the
// dispatcher decides, as for every publish. The bus carries text: a
// message with an image or audio is refused.

// SamplingApprovalAction is the approval action a sampling request asks
// for; an allowance ("always") for it covers the capsule's later ones.
const SamplingApprovalAction = "mcp_sampling"

// Bounds of one sampling request.
const (
	// maxSamplingMessages and maxSamplingBytes bound what a server sends
	// the model on the person's budget.
	maxSamplingMessages = 64
	maxSamplingBytes    = 256 << 10
	// maxSamplingShown bounds the messages' text the person is shown.
	maxSamplingShown = 2048
	// samplingBytesPerToken turns maxTokens into a bound on the answer's
	// bytes: the bus's generate request carries no token limit, so the
	// answer is cut there (stopReason "maxTokens").
	samplingBytesPerToken = 4
	// samplingRegistryWait bounds the round trip to the provider registry.
	samplingRegistryWait = 10 * time.Second
)

// SamplingTimeout bounds one sampling generation, from the request to the
// provider to the end of its stream.
const SamplingTimeout = 2 * time.Minute

// samplingRefused is the JSON-RPC error code of a refused or declined
// request (MCP's "user rejected sampling request").
const samplingRefused = -1

var samplingSeq atomic.Uint64

// sample answers a server's sampling/createMessage.
func (e *Engine) sample(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	refuse := func(format string, args ...any) (*mcp.CreateMessageResult, error) {
		msg := fmt.Sprintf(format, args...)
		e.log.Warn("mcp: sampling refused", "reason", msg)
		return nil, &jsonrpc.Error{Code: samplingRefused, Message: "Astrid refused the sampling request: " + msg}
	}
	if !e.opts.Sampling {
		return refuse("the operator has not allowed sampling for capsule %s (allow it in config.toml: [mcp] sampling = [%q])", e.capsuleID, e.capsuleID)
	}
	p := req.Params
	if p == nil {
		return refuse("it has no params")
	}
	msgs, shown, err := samplingMessages(p)
	if err != nil {
		return refuse("%v", err)
	}
	if p.MaxTokens <= 0 {
		return refuse("maxTokens is %d; it must be positive", p.MaxTokens)
	}
	call, err := e.progress.onSession(req.Session)
	if err != nil {
		return refuse("%v", err)
	}
	resource := fmt.Sprintf("MCP server %s of capsule %s asks the model for up to %d tokens:\n%s", e.srv.ID, e.capsuleID, p.MaxTokens, shown)
	ok, err := call.RequestApproval(SamplingApprovalAction, resource)
	switch {
	case hostapi.CodeOf(err) == hostapi.CodeUnavailable:
		return refuse("there is no person to approve it (a headless run)")
	case err != nil:
		return refuse("asking for approval: %v", err)
	case !ok:
		return refuse("the person declined it")
	}
	provider, model, err := activeModel(call)
	if err != nil {
		return nil, e.samplingFailed("", err)
	}
	text, stop, err := generate(call, provider, ipc.LLMRequest{Model: model, Messages: msgs, System: p.SystemPrompt}, int(p.MaxTokens)*samplingBytesPerToken)
	if err != nil {
		return nil, e.samplingFailed(" on "+provider+":"+model, err)
	}
	return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: text}, Model: model, StopReason: stop}, nil
}

// samplingFailed is the error of an approved request that did not run; one
// the capsule's ACL refused says what its manifest must grant.
func (e *Engine) samplingFailed(on string, err error) error {
	if hostapi.CodeOf(err) == hostapi.CodeDenied {
		return fmt.Errorf("sampling for MCP server %s%s: capsule %s's Capsule.toml must grant [publish] %q and %q, [subscribe] %q and %q (docs/mcp.md, Sampling): %w",
			e.srv.ID, on, e.capsuleID, ipc.RegistryGetActiveModelTopic, ipc.LLMGenerateTopic("*"),
			ipc.RegistryResponseTopic(ipc.RegistryOpGetActiveModel, "*"), ipc.LLMStreamTopic("*"), err)
	}
	return fmt.Errorf("sampling for MCP server %s%s: %w", e.srv.ID, on, err)
}

// samplingMessages are the request's messages as the bus carries them,
// and their text as the person is shown it (bounded). Only text is taken.
func samplingMessages(p *mcp.CreateMessageParams) ([]ipc.Message, string, error) {
	if len(p.Messages) == 0 {
		return nil, "", errors.New("it has no messages")
	}
	if len(p.Messages) > maxSamplingMessages {
		return nil, "", fmt.Errorf("it has %d messages; at most %d are sent", len(p.Messages), maxSamplingMessages)
	}
	var shown strings.Builder
	msgs := make([]ipc.Message, 0, len(p.Messages))
	size := len(p.SystemPrompt)
	for i, m := range p.Messages {
		if m == nil {
			return nil, "", fmt.Errorf("message %d is empty", i)
		}
		var role ipc.Role
		switch m.Role {
		case "user":
			role = ipc.RoleUser
		case "assistant":
			role = ipc.RoleAssistant
		default:
			return nil, "", fmt.Errorf("message %d has role %q; user or assistant", i, m.Role)
		}
		t, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return nil, "", fmt.Errorf("message %d is %s content; only text reaches the model (the bus carries text)", i, contentKind(m.Content))
		}
		size += len(t.Text)
		if size > maxSamplingBytes {
			return nil, "", fmt.Errorf("its messages hold more than %d bytes", maxSamplingBytes)
		}
		msgs = append(msgs, ipc.TextMessage(role, t.Text))
		fmt.Fprintf(&shown, "%s: %s\n", m.Role, t.Text)
	}
	return msgs, clipShown(shown.String()), nil
}

// contentKind names a content's kind in an error.
func contentKind(c mcp.Content) string {
	switch c.(type) {
	case *mcp.ImageContent:
		return "image"
	case *mcp.AudioContent:
		return "audio"
	case nil:
		return "no"
	}
	return fmt.Sprintf("%T", c)
}

// clipShown keeps s within maxSamplingShown bytes, whole runes, saying
// when it cut.
func clipShown(s string) string {
	if len(s) <= maxSamplingShown {
		return s
	}
	return clipBytes(s, maxSamplingShown) + "…"
}

// activeModel asks the provider registry for the call's principal's
// active model.
func activeModel(call *host.Call) (provider, model string, err error) {
	registries, err := call.Interceptors(ipc.RegistryGetActiveModelTopic)
	if err != nil {
		return "", "", fmt.Errorf("finding the provider registry: %w", err)
	}
	if len(registries) == 0 {
		return "", "", errors.New("no provider registry is loaded, so there is no active model")
	}
	corr := "smp-model-" + strconv.FormatUint(samplingSeq.Add(1), 10)
	req, err := json.Marshal(ipc.RegistryRequest{CorrelationID: corr})
	if err != nil {
		return "", "", err
	}
	payload, err := sdk.RoundTrip(call, ipc.RegistryGetActiveModelTopic, ipc.RegistryResponseTopic(ipc.RegistryOpGetActiveModel, corr), corr, req, registries, samplingRegistryWait, "provider registry")
	if err != nil {
		return "", "", err
	}
	var reply ipc.RegistryReply
	if err := json.Unmarshal(payload, &reply); err != nil {
		return "", "", fmt.Errorf("the registry's answer does not decode: %w", err)
	}
	if reply.Error != "" {
		return "", "", fmt.Errorf("the provider registry: %s", reply.Error)
	}
	if reply.ActiveModel == nil || reply.ActiveModel.Provider == "" || reply.ActiveModel.Model == "" {
		return "", "", errors.New("the provider registry names no active model")
	}
	return reply.ActiveModel.Provider, reply.ActiveModel.Model, nil
}

// generate asks provider for r and returns the streamed text (cut at
// maxBytes, stopReason "maxTokens") and why it stopped.
func generate(call *host.Call, provider string, r ipc.LLMRequest, maxBytes int) (string, string, error) {
	topic := ipc.LLMGenerateTopic(provider)
	streamers, err := call.Interceptors(topic)
	if err != nil {
		return "", "", err
	}
	if len(streamers) == 0 {
		return "", "", fmt.Errorf("no LLM provider %q is loaded (nothing handles %s)", provider, topic)
	}
	r.RequestID = "smp-" + strconv.FormatUint(samplingSeq.Add(1), 10)
	req, err := r.MarshalJSON()
	if err != nil {
		return "", "", err
	}
	stream := ipc.LLMStreamTopic(provider)
	sub, err := call.Subscribe(stream)
	if err != nil {
		return "", "", fmt.Errorf("reading the provider's stream: %w", err)
	}
	defer func() { _ = call.Unsubscribe(sub) }()
	if err := call.PublishRequest(topic, req, hostapi.Request{ReplyTo: stream, CorrelationID: r.RequestID, Timeout: SamplingTimeout}); err != nil {
		return "", "", fmt.Errorf("asking provider %q: %w", provider, err)
	}
	var text strings.Builder
	deadline := time.Now().Add(SamplingTimeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return "", "", fmt.Errorf("the model did not finish within %s", SamplingTimeout)
		}
		msg, err := call.Recv(sub, left)
		if err != nil {
			if hostapi.CodeOf(err) == hostapi.CodeTimeout {
				continue
			}
			return "", "", err
		}
		if f, ok := ipc.AsRequestFailed(msg.Payload); ok {
			if msg.SourceID == ipc.KernelSourceID && f.CorrelationID == r.RequestID {
				return "", "", errors.New(ipc.FailureText(f, "the model request"))
			}
			continue
		}
		if !slices.Contains(streamers, msg.SourceID) {
			continue
		}
		var m ipc.LLMStreamEvent
		if err := json.Unmarshal(msg.Payload, &m); err != nil || m.RequestID != r.RequestID {
			continue
		}
		switch m.Event.Kind {
		case ipc.StreamTextDelta:
			text.WriteString(m.Event.Text)
			if text.Len() >= maxBytes {
				return clipBytes(text.String(), maxBytes), "maxTokens", nil
			}
		case ipc.StreamError:
			return "", "", fmt.Errorf("the model failed: %s", m.Event.Text)
		case ipc.StreamDone:
			return text.String(), "endTurn", nil
		}
	}
}

// clipBytes keeps the first n bytes of s, whole runes.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}
