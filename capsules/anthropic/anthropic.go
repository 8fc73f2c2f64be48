package anthropic

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	sdkapi "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the provider's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// Provider is the provider id: the last segment of its topics.
const Provider = "anthropic"

// retryWaitTopic is never published; a Recv on it is the handler's bounded
// wait before its one retry.
const retryWaitTopic = "anthropic.v1.internal.retry_wait"

// New returns the provider's code.
func New() *sdk.Capsule {
	c := sdk.New("Claude models through Anthropic's Messages API (streaming, tool use)")
	c.Handle(ipc.LLMGenerateTopic(Provider), "handle_generate", handleGenerate)
	c.Publishes(ipc.LLMStreamTopic(Provider))
	c.Handle(ipc.LLMRequestDescribeTopic, "handle_describe", handleDescribe)
	c.Publishes(ipc.LLMResponseDescribeTopic)
	c.Subscribes(retryWaitTopic)
	return c
}

func handleDescribe(c *sdk.Call) error {
	var req describeRequest
	_ = json.Unmarshal(c.Payload(), &req) // anything else is a plain describe
	s := readSettings(c)
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
		c.Log(hostapi.LogWarn, fmt.Sprintf("anthropic: request %q cannot be cancelled: %v", req.RequestID, err))
	}
	out := newStreamOut(c, req.RequestID)
	s := readSettings(c)
	for _, p := range s.problems {
		c.Log(hostapi.LogWarn, "anthropic: [env] "+p+"; the default is used")
	}
	if ok, why := s.ready(); !ok {
		return out.fail("anthropic: " + why)
	}
	params, err := newParams(req, s)
	if err != nil {
		return out.fail(fmt.Sprintf("anthropic: request %q: %v", req.RequestID, err))
	}
	egress, err := c.HTTPClient()
	if err != nil {
		return out.fail(fmt.Sprintf("anthropic: no HTTP client: %v", err))
	}
	for attempt := 0; ; attempt++ {
		err := streamOnce(c, s, egress, params, out)
		if err == nil || out.failed {
			return out.err
		}
		if wait, ok := retryable(err); ok && attempt == 0 && !out.sent {
			if wait > maxRetryWait {
				return out.fail(fmt.Sprintf("%s; the API asks to wait %s, more than the %s this provider waits", describeErr(err, s), wait.Round(1e9), maxRetryWait))
			}
			c.Log(hostapi.LogInfo, fmt.Sprintf("anthropic: %s; retrying once in %s", describeErr(err, s), wait))
			if werr := c.Wait(retryWaitTopic, wait); werr != nil {
				return out.fail(fmt.Sprintf("%s; the wait before retrying ended: %v", describeErr(err, s), werr))
			}
			continue
		}
		return out.fail(describeErr(err, s))
	}
}

// streamOnce makes one streamed request and publishes its events as they
// arrive. It returns nil once message_stop was published, else why the
// stream ended early (a publish that failed is recorded in out).
func streamOnce(c *sdk.Call, s settings, egress *http.Client, params sdkapi.MessageNewParams, out *streamOut) error {
	ctx, dog := c.Watch(s.streamTimeout)
	defer dog.Stop()
	httpClient := &http.Client{Transport: guardedTransport{base: egress.Transport, dog: dog}, CheckRedirect: egress.CheckRedirect}
	client := sdkapi.NewClient(clientOptions(s, httpClient)...)
	stream := client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	tr := newTranslator()
	var evs []ipc.StreamEvent
	for stream.Next() {
		evs = tr.next(stream.Current(), evs[:0])
		for _, ev := range evs {
			if err := out.publish(ev); err != nil {
				return err
			}
		}
		if tr.stopped {
			return nil
		}
	}
	if err := stream.Err(); err != nil {
		return classify(ctx, err)
	}
	return errTruncated
}

// clientOptions configure the SDK: only what the capsule's [env] says (no
// environment variable or profile file of the process), its HTTP through
// the call's egress client, no retries of its own (the handler retries a
// 429 or 529 once, before any output), no OpenTelemetry spans or headers.
func clientOptions(s settings, httpClient *http.Client) []option.RequestOption {
	base := s.apiBase()
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(httpClient),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	if s.temperature != nil {
		// API version 2026-10-21 has no temperature in the SDK's
		// parameters; the operator asked for one, so it is sent as is and
		// a model that refuses it answers with a readable 400.
		opts = append(opts, option.WithJSONSet("temperature", *s.temperature))
	}
	return opts
}

// streamOut publishes one request's stream events and remembers whether
// any went out (no retry after output) and whether it ended in an Error.
type streamOut struct {
	c         *sdk.Call
	requestID string
	sent      bool
	failed    bool
	err       error
}

func newStreamOut(c *sdk.Call, requestID string) *streamOut {
	return &streamOut{c: c, requestID: requestID}
}

func (o *streamOut) publish(ev ipc.StreamEvent) error {
	b, err := sdk.EncodeStreamEvent(o.requestID, ev)
	if err == nil {
		// A fast stream can outrun the principal's publish budget: wait
		// for it (backpressure) rather than drop an event or the stream.
		err = sdk.PublishPatiently(o.c, ipc.LLMStreamTopic(Provider), b, retryWaitTopic)
	}
	if err != nil {
		// The requester can no longer be told; the failure reply may.
		o.failed = true
		o.err = fmt.Errorf("anthropic: request %q: publish: %w", o.requestID, err)
		return o.err
	}
	o.sent = true
	return nil
}

// fail publishes msg as the stream's Error, its last event.
func (o *streamOut) fail(msg string) error {
	o.c.Log(hostapi.LogWarn, msg)
	if err := o.publish(ipc.StreamEvent{Kind: ipc.StreamError, Text: msg}); err != nil {
		return err
	}
	o.failed = true
	return nil
}
