// Package replay is the built-in replay LLM provider (DESIGN §5a): on the
// provider contract of spec/capsules-cli.md §6.1 it answers each
// llm_request on llm.v1.request.generate.replay by playing one turn of a
// recorded script on llm.v1.stream.replay, every event carrying the
// request's request_id, so demos and tests run offline and deterministic.
//
// The script is JSONL (docs/replay.md): a line {"match": {"user": "text"}}
// or {"match": {"tool_results": ["call id", …]}} starts a turn; the lines
// after it are stream events in ipc.StreamEvent's wire form
// ({"TextDelta": "…"}, {"ToolCallStart": {"id", "name"}}, …), the last of
// them "Done" or {"Error": "…"}. A request is answered by the first turn, in
// file order, that matches it: a "user" turn when the request's last
// message is a user message containing that text ("" matches any), a
// "tool_results" turn when the request ends in tool results for exactly
// those call ids; a match may add "sent", text the whole request (system
// prompt and every message) must contain. The script is the file named by
// the capsule's [env] script (read through the host FS API, so within its
// fs_read grant, in either engine), or, when that is empty, the embedded
// demo.jsonl.
//
// With [env] context_window set it stands in for a model's server that
// enforces a context limit: describe reports that window, and a request
// whose body is over it (four bytes a token, the agent's estimate) is
// refused with an Error worded as OpenAI's context_length_exceeded, so the
// agent's compaction can be replayed offline.
//
// It also answers llm.v1.request.describe with its one ProviderEntry on
// llm.v1.response.describe.
//
// It owns the playing of scripts only: it keeps no state between requests
// (the script is read and parsed per request) and never reaches a network.
// A request no turn matches, or a script that does not parse, is answered
// with an Error event (never silence); a malformed script's error names
// file:line.
package replay

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the replay provider's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// Demo is the script played when [env] script is empty: a turn that
// reads README.md with read_file, and one that answers once that result
// is back.
//
//go:embed demo.jsonl
var Demo []byte

// DemoName names the embedded script in error messages.
const DemoName = "demo.jsonl"

// Provider is the provider id: the last segment of its topics.
const Provider = "replay"

// New returns the replay provider's code.
func New() *sdk.Capsule {
	c := sdk.New("Replays a recorded LLM script, for offline demos and tests")
	c.Handle(ipc.LLMGenerateTopic(Provider), "handle_generate", handleGenerate)
	c.Publishes(ipc.LLMStreamTopic(Provider))
	c.Handle(ipc.LLMRequestDescribeTopic, "handle_describe", handleDescribe)
	c.Publishes(ipc.LLMResponseDescribeTopic)
	return c
}

func handleDescribe(c *sdk.Call) error {
	n, _, err := window(c)
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("replay: %v; %d applies", err, n))
	}
	return c.PublishJSON(ipc.LLMResponseDescribeTopic, describe(n))
}

func handleGenerate(c *sdk.Call) error {
	req, ok, err := sdk.ProviderRequest(c, Provider)
	if !ok {
		return err
	}
	limit, enforced, err := window(c)
	if err != nil {
		return fail(c, req.RequestID, "replay: "+err.Error())
	}
	if refusal := overWindow(len(c.Payload()), limit); enforced && refusal != "" {
		return fail(c, req.RequestID, "replay: "+refusal)
	}
	script, err := load(c)
	if err != nil {
		return fail(c, req.RequestID, "replay: "+err.Error())
	}
	turn, ok := script.Pick(req)
	if !ok {
		return fail(c, req.RequestID, fmt.Sprintf("replay: no turn of %s matches the request (%s)", script.Name, describeRequest(req)))
	}
	for _, ev := range turn.Events {
		if err := publish(c, req.RequestID, ev); err != nil {
			return fmt.Errorf("replay: request %q: %w", req.RequestID, err)
		}
	}
	return nil
}

// load reads and parses the script [env] script names, or the demo.
func load(c *sdk.Call) (*Script, error) {
	path, _ := c.Config("script")
	if path == "" {
		return Parse(DemoName, Demo)
	}
	data, err := c.FSRead(path)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return Parse(path, data)
}

// describe says what a request offered to be matched on, for the error
// of an unmatched request (text is cut short: prompts can be long).
func describeRequest(req ipc.LLMRequest) string {
	if len(req.Messages) == 0 {
		return "it has no messages"
	}
	if ids := trailingToolResults(req.Messages); ids != nil {
		return fmt.Sprintf("it ends in tool results for %q", ids)
	}
	last := req.Messages[len(req.Messages)-1]
	if text, ok := userText(last); ok {
		const shown = 80
		if len(text) > shown {
			text = strings.ToValidUTF8(text[:shown], "") + "…"
		}
		return fmt.Sprintf("last user message %q", text)
	}
	return fmt.Sprintf("it ends in a %s message", last.Role)
}

func fail(c *sdk.Call, requestID, msg string) error {
	return sdk.ProviderFail(c, Provider, requestID, msg)
}

func publish(c *sdk.Call, requestID string, ev ipc.StreamEvent) error {
	return sdk.ProviderPublish(c, Provider, requestID, ev)
}
