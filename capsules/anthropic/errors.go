package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdkapi "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/astrid-go/astrid/sdk"
)

// errTruncated is a stream that ended (EOF, the connection closed) without
// message_stop: the SDK reports no error for it, so a silent Done would
// pass a cut-off answer for a whole one.
var errTruncated = errors.New("the stream ended before message_stop (connection closed or body truncated)")

// Retry bounds: one retry, after the API's Retry-After when it gives one
// no longer than maxRetryWait, else after defaultRetryWait.
const (
	maxRetryWait     = 20 * time.Second
	defaultRetryWait = 2 * time.Second
)

// statusOverloaded is Anthropic's 529 (overloaded_error).
const statusOverloaded = 529

// stalledError is a connection that sent nothing for stream_timeout_secs.
type stalledError struct{ cause error }

func (e stalledError) Error() string { return e.cause.Error() }
func (e stalledError) Unwrap() error { return e.cause }

// classify tells a stall (the watchdog ended the request) from the error
// it surfaced as (a cancelled read).
func classify(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, sdk.ErrStalled) {
		return stalledError{cause: cause}
	}
	return err
}

// retryable reports whether err is a 429 or 529 answer, and how long the
// API asks to wait before retrying.
func retryable(err error) (time.Duration, bool) {
	var apiErr *sdkapi.Error
	if !errors.As(err, &apiErr) || (apiErr.StatusCode != http.StatusTooManyRequests && apiErr.StatusCode != statusOverloaded) {
		return 0, false
	}
	if apiErr.Response != nil {
		if d, ok := sdk.RetryAfter(apiErr.Response.Header, time.Now()); ok {
			return d, true
		}
	}
	return defaultRetryWait, true
}

// describeErr is the Error event's text for err: what went wrong, in
// words a person can act on.
func describeErr(err error, s settings) string {
	var apiErr *sdkapi.Error
	var stalled stalledError
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &stalled):
		return fmt.Sprintf("anthropic: no data from the API for %s (stream_timeout_secs); the request was abandoned", s.streamTimeout)
	case errors.Is(err, errTruncated):
		return "anthropic: " + errTruncated.Error()
	case isLineTooLong(err):
		return "anthropic: " + errLineTooLong.Error()
	case errors.As(err, &apiErr):
		return describeAPIError(apiErr)
	case errors.As(err, &syntax), strings.Contains(err.Error(), "invalid character"), strings.Contains(err.Error(), "unexpected end of JSON"):
		return "anthropic: the API sent an event that is not valid JSON: " + err.Error()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "anthropic: the request was cancelled (the call ended): " + err.Error()
	}
	base := s.baseURL
	if base == "" {
		base = defaultBaseURL
	}
	return fmt.Sprintf("anthropic: request to %s failed: %v", base, err)
}

func describeAPIError(e *sdkapi.Error) string {
	kind := string(e.Type())
	msg := e.Message
	if kind == "" && msg == "" {
		// Not Anthropic's JSON error body: show a bounded part of it.
		raw := strings.TrimSpace(e.RawJSON())
		if len(raw) > 300 {
			raw = strings.ToValidUTF8(raw[:300], "") + "…"
		}
		msg = raw
	}
	var b strings.Builder
	if e.StatusCode == http.StatusOK {
		// An `error` event in a stream that had begun.
		b.WriteString("anthropic: the stream reported an error")
	} else {
		fmt.Fprintf(&b, "anthropic: HTTP %d", e.StatusCode)
		if t := http.StatusText(e.StatusCode); t != "" {
			b.WriteString(" " + t)
		} else if e.StatusCode == statusOverloaded {
			b.WriteString(" Overloaded")
		}
	}
	if kind != "" {
		b.WriteString(" (" + kind + ")")
	}
	if msg != "" {
		b.WriteString(": " + msg)
	}
	if id := requestID(e); id != "" {
		b.WriteString(" [request " + id + "]")
	}
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		b.WriteString("; check the key: `" + setKeyCommand + "`")
	}
	return b.String()
}

// requestID is the request's id from the request-id header, else from
// the error body's request_id (what a person quotes to Anthropic).
func requestID(e *sdkapi.Error) string {
	if e.RequestID != "" {
		return e.RequestID
	}
	var body struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal([]byte(e.RawJSON()), &body)
	return body.RequestID
}
