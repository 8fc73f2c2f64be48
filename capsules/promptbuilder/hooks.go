package promptbuilder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// HookRequest is prompt_builder.v1.hook.before_build's payload.
type HookRequest struct {
	RequestID     string        `json:"request_id"`
	SessionID     string        `json:"session_id,omitempty"`
	Messages      []ipc.Message `json:"messages"`
	SystemPrompt  string        `json:"system_prompt"`
	Model         string        `json:"model,omitempty"`
	Provider      string        `json:"provider,omitempty"`
	ResponseTopic string        `json:"response_topic"`
}

// HookResponse is what a hook may answer (camelCase, as upstream's hooks
// write it). Only a holder of allow_prompt_injection may set the first
// three; prependContext is user-visible and open to every hook.
type HookResponse struct {
	SystemPrompt         string `json:"systemPrompt,omitempty"`
	PrependSystemContext string `json:"prependSystemContext,omitempty"`
	AppendSystemContext  string `json:"appendSystemContext,omitempty"`
	PrependContext       string `json:"prependContext,omitempty"`
}

// AfterBuild is prompt_builder.v1.hook.after_build's payload, a notice.
type AfterBuild struct {
	RequestID         string `json:"request_id"`
	SessionID         string `json:"session_id,omitempty"`
	SystemPrompt      string `json:"system_prompt"`
	UserContextPrefix string `json:"user_context_prefix"`
}

// MaxContributionBytes caps each field of a hook's answer (upstream's
// memory capsule caps its sections at 32 KiB).
const MaxContributionBytes = 32 << 10

// contribution is one hook's answer, after the gate.
type contribution struct {
	capsule string
	HookResponse
}

// runHooks fans before_build out and returns the gated answers in the
// dispatch order of the hooks (so "the last systemPrompt wins" does not
// depend on which answered first). It waits until every capsule that
// intercepts before_build has answered, or timeout.
func runHooks(c *sdk.Call, req HookRequest, timeout time.Duration) ([]contribution, error) {
	hooks, err := c.Interceptors(BeforeBuildTopic)
	if err != nil {
		return nil, fmt.Errorf("who intercepts %s: %w", BeforeBuildTopic, err)
	}
	order := distinct(hooks, c.CapsuleID())
	if len(order) == 0 {
		return nil, nil
	}
	req.ResponseTopic = HookResponseTopic(req.RequestID)
	sub, err := c.Subscribe(req.ResponseTopic)
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", req.ResponseTopic, err)
	}
	defer func() { _ = c.Unsubscribe(sub) }()
	if err := c.PublishJSON(BeforeBuildTopic, req); err != nil {
		return nil, fmt.Errorf("publish %s: %w", BeforeBuildTopic, err)
	}
	answers := map[string]HookResponse{}
	silent, err := sdk.Gather(c, sub, order, timeout, func(msg hostapi.Message, awaited bool) bool {
		src := msg.SourceID
		if !awaited {
			// Not a hook of this request, or a second answer: the kernel
			// stamped the sender, so nobody answers for another.
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: ignored an answer on %s from %s, which is not a before_build hook still to answer", msg.Topic, src))
			return false
		}
		if string(bytes.TrimSpace(msg.Payload)) == "{}" {
			return true // answered: nothing to add this time
		}
		resp, err := parseHookResponse(msg.Payload)
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: hook %s answered something that is not a hook response (ignored): %v", src, err))
			return true
		}
		answers[src] = resp
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("receive hook answers: %w", err)
	}
	for _, id := range silent {
		c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: hook %s did not answer before_build within %v", id, timeout))
	}
	var out []contribution
	for _, id := range order {
		resp, ok := answers[id]
		if !ok {
			continue
		}
		out = append(out, contribution{capsule: id, HookResponse: gate(c, id, capContribution(c, id, resp))})
	}
	return out, nil
}

// parseHookResponse reads a hook's answer, bare or inside {"data": …}. An
// object with none of the four fields is not an answer.
func parseHookResponse(payload []byte) (HookResponse, error) {
	var resp HookResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		return resp, err
	}
	if resp == (HookResponse{}) {
		var wrapped struct {
			Data *HookResponse `json:"data"`
		}
		if json.Unmarshal(payload, &wrapped) == nil && wrapped.Data != nil {
			resp = *wrapped.Data
		}
	}
	if resp == (HookResponse{}) {
		return resp, errors.New("none of systemPrompt, prependSystemContext, appendSystemContext, prependContext is set")
	}
	return resp, nil
}

// gate drops what capsule id may not do: without allow_prompt_injection
// only prependContext survives (seed 003). A failed check counts as no.
func gate(c *sdk.Call, id string, resp HookResponse) HookResponse {
	if resp.SystemPrompt == "" && resp.PrependSystemContext == "" && resp.AppendSystemContext == "" {
		return resp
	}
	held, err := c.HoldsGrant(id, hostapi.GrantPromptInjection)
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: cannot tell whether hook %s holds %s (treated as not): %v", id, hostapi.GrantPromptInjection, err))
	}
	if held {
		return resp
	}
	c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: hook %s tried to change the system prompt without %s = true; only its prependContext is kept", id, hostapi.GrantPromptInjection))
	return HookResponse{PrependContext: resp.PrependContext}
}

// capContribution cuts each field of a hook's answer to
// MaxContributionBytes, saying so in the text and the log.
func capContribution(c *sdk.Call, id string, r HookResponse) HookResponse {
	for _, f := range []*string{&r.SystemPrompt, &r.PrependSystemContext, &r.AppendSystemContext, &r.PrependContext} {
		if len(*f) > MaxContributionBytes {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: hook %s answered %d bytes in one field; cut to %d", id, len(*f), MaxContributionBytes))
			*f = cut(*f, MaxContributionBytes, "hook "+id)
		}
	}
	return r
}
