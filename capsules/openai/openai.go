package openai

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the provider's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// Provider is the provider name: the last segment of its topics.
const Provider = "openai"

// waitTopic is received on, and never published to, to wait out a 429.
const waitTopic = "llm.v1.internal.openai.wait"

// New returns the provider's code.
func New() *sdk.Capsule {
	c := sdk.New("LLM provider: OpenAI Chat Completions and every server that speaks it")
	c.Handle(ipc.LLMGenerateTopic(Provider), "handle_generate", handleGenerate)
	c.Publishes(ipc.LLMStreamTopic(Provider))
	c.Handle(ipc.LLMRequestDescribeTopic, "handle_describe", handleDescribe)
	c.Publishes(ipc.LLMResponseDescribeTopic)
	c.Subscribes(waitTopic)
	return c
}

func handleDescribe(c *sdk.Call) error {
	var req describeRequest
	_ = json.Unmarshal(c.Payload(), &req) // anything else is a plain describe
	s := config(c)
	models, windows, note := offeredModels(c, s, req.Refresh)
	return c.PublishJSON(ipc.LLMResponseDescribeTopic, describe(s, models, windows, note))
}

func handleGenerate(c *sdk.Call) error {
	req, ok, err := sdk.ProviderRequest(c, Provider)
	if !ok {
		return err
	}
	// A turn that ends mid-stream (cancelled, pre-empted, timed out)
	// cancels its model request by this key (react's cancelRunning):
	// otherwise the stream runs on unread and the principal's next
	// request waits behind it.
	if err := c.SetCancelKey(req.RequestID); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("openai: request %q cannot be cancelled: %v", req.RequestID, err))
	}
	s := config(c)
	for _, p := range s.problems {
		c.Log(hostapi.LogWarn, "openai: [env] "+p)
	}
	if why := s.notReady(); why != "" {
		return fail(c, req.RequestID, "openai: "+why)
	}
	if req.Model == "" && s.model == "" {
		// A server of the operator's, no model named: the one it serves.
		if s.model, err = servedModel(c, s); err != nil {
			return fail(c, req.RequestID, "openai: "+err.Error())
		}
	}
	params, err := chatParams(req, s)
	if err != nil {
		return fail(c, req.RequestID, "openai: "+err.Error())
	}
	client, err := c.HTTPClient()
	if err != nil {
		return fail(c, req.RequestID, "openai: no HTTP client: "+err.Error())
	}
	enc, err := newEventEncoder(req.RequestID)
	if err != nil {
		return fail(c, req.RequestID, "openai: "+err.Error())
	}
	out := &publisher{c: c, enc: enc}
	for attempt := 0; ; attempt++ {
		f := generate(c.Context(), client, s, params, out.emit)
		if f == nil {
			return out.err
		}
		if out.err != nil {
			return out.err // the bus refused an event: no one hears an Error either
		}
		// One bounded wait on a 429, and only before any output: after
		// it, a retry would repeat what the requester already has.
		if f.rateLimited && attempt == 0 && !out.published && f.wait <= maxRetryWait {
			c.Log(hostapi.LogInfo, fmt.Sprintf("openai: %s is rate limiting; retrying once in %s", s.host(), f.wait))
			if err := c.Wait(waitTopic, f.wait); err != nil {
				return fail(c, req.RequestID, fmt.Sprintf("%s (the wait to retry ended: %v)", f.msg, err))
			}
			continue
		}
		msg := f.msg
		switch {
		case f.rateLimited && attempt > 0:
			msg += " (after one retry)"
		case f.rateLimited && f.wait > maxRetryWait:
			msg += fmt.Sprintf(" (it asks to wait %s, more than the %s this provider waits)", f.wait.Round(time.Second), maxRetryWait)
		}
		return fail(c, req.RequestID, msg)
	}
}

// generate streams one Chat Completion, emitting its events; it returns
// nil once Done is emitted, or what went wrong (nothing terminal emitted).
func generate(parent context.Context, client *http.Client, s settings, params oai.ChatCompletionNewParams, emit func(ipc.StreamEvent) error) *failure {
	ctx, dog := sdk.NewWatch(parent, s.streamTimeout)
	defer dog.Stop()
	g := newGuard(client.Transport, dog.Feed)
	opts := []option.RequestOption{
		option.WithBaseURL(s.baseURL),
		option.WithHTTPClient(&http.Client{Transport: g, CheckRedirect: client.CheckRedirect}),
		option.WithMaxRetries(0),
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	svc := oai.NewChatCompletionService(opts...)
	stream := svc.NewStreaming(ctx, params)
	defer stream.Close()
	asm := newAssembler(emit)
	for stream.Next() {
		chunk := stream.Current()
		if msg, ok := errorChunk(&chunk); ok {
			return &failure{msg: fmt.Sprintf("openai: %s reported an error mid-stream: %s", s.host(), msg)}
		}
		if err := asm.chunk(&chunk); err != nil {
			return &failure{msg: err.Error()}
		}
	}
	if err := stream.Err(); err != nil {
		return classify(err, g, ctx, s)
	}
	if !g.sawDone && !asm.finished {
		return &failure{msg: fmt.Sprintf("openai: the stream from %s ended before its end marker (no finish_reason, no [DONE]): the connection was closed or the body cut short", s.host())}
	}
	if err := asm.finish(); err != nil {
		return &failure{msg: err.Error()}
	}
	return nil
}

// errorChunk recognises an error object sent as a chunk without an
// "error" key (older vLLM: {"object":"error","message":...}).
func errorChunk(ch *oai.ChatCompletionChunk) (string, bool) {
	if ch.JSON.Object.Raw() != `"error"` {
		return "", false
	}
	return errorBodyMessage([]byte(ch.RawJSON())), true
}

// publisher publishes a request's events on the stream topic.
type publisher struct {
	c   *sdk.Call
	enc *eventEncoder
	// published is set once an event went out; err is the bus's refusal.
	published bool
	err       error
}

// busError is the bus refusing an event.
type busError struct{ err error }

func (e *busError) Error() string { return "openai: publishing a stream event: " + e.err.Error() }
func (e *busError) Unwrap() error { return e.err }

func (p *publisher) emit(ev ipc.StreamEvent) error {
	if p.err != nil {
		return p.err
	}
	out, err := p.enc.encode(ev)
	if err == nil {
		// A fast stream can outrun the principal's publish budget: wait
		// for it (backpressure) rather than drop an event or the stream.
		err = sdk.PublishPatiently(p.c, ipc.LLMStreamTopic(Provider), out, waitTopic)
	}
	if err != nil {
		p.err = &busError{err: fmt.Errorf("request %q: %w", p.enc.requestID, err)}
		return p.err
	}
	p.published = true
	return nil
}

func fail(c *sdk.Call, requestID, msg string) error {
	return sdk.ProviderFail(c, Provider, requestID, msg)
}
