package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/astrid-go/astrid/sdk"
)

// maxRetryWait bounds the one wait on a 429: a server asking for longer is
// reported, not waited for (a turn should not hang on a quota).
const maxRetryWait = 30 * time.Second

// defaultRetryWait is the wait on a 429 that does not say how long.
const defaultRetryWait = time.Second

// failure says what went wrong with one attempt, for one Error event.
type failure struct {
	msg string
	// rateLimited is set for a 429; wait is how long it asks for.
	rateLimited bool
	wait        time.Duration
}

// classify turns what ended a stream abnormally into a readable message.
func classify(err error, g *guard, ctx context.Context, s settings) *failure {
	host := s.host()
	switch {
	case errors.Is(context.Cause(ctx), sdk.ErrStalled):
		return &failure{msg: fmt.Sprintf("openai: %s sent nothing for %d s (stream_timeout_secs); the request was abandoned", host, int(s.streamTimeout.Seconds()))}
	case errors.Is(err, errLineTooLong):
		return &failure{msg: fmt.Sprintf("openai: %s sent a line of 1 MiB or more; the stream was abandoned", host)}
	case errors.As(err, new(*url.Error)):
		// The client failed (a refused redirect, a reset connection): no
		// answer of the server's to report.
		return &failure{msg: fmt.Sprintf("openai: the request to %s failed: %v", host, err)}
	case g.status != 0 && (g.status < 200 || g.status > 299):
		f := &failure{msg: fmt.Sprintf("openai: %s answered %d %s: %s", host, g.status, http.StatusText(g.status), errorBodyMessage(g.errBody))}
		if g.status == http.StatusTooManyRequests {
			f.rateLimited = true
			f.wait = retryAfter(g.retryAfter)
		}
		return f
	case ctx.Err() != nil:
		return &failure{msg: fmt.Sprintf("openai: the request to %s was stopped: %v", host, context.Cause(ctx))}
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return &failure{msg: fmt.Sprintf("openai: %s reported an error mid-stream: %s", host, errorBodyMessage(streamErr.Event.Data))}
	}
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typeErr) {
		return &failure{msg: fmt.Sprintf("openai: %s sent a chunk that is not a valid chat completion chunk: %v", host, err)}
	}
	return &failure{msg: fmt.Sprintf("openai: the stream from %s broke: %v", host, err)}
}

// errorBodyMessage is the message of an error body: error.message of
// OpenAI's {"error": {...}} (also Ollama's, llama.cpp's, newer vLLM's), a
// top-level message (older vLLM's {"object":"error","message":...}), an
// error that is a plain string, else the body's text, cut to 4 KiB.
func errorBodyMessage(body []byte) string {
	var shaped struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &shaped) == nil {
		var inner struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var plain string
		switch {
		case json.Unmarshal(shaped.Error, &inner) == nil && inner.Message != "":
			if inner.Type != "" {
				return inner.Message + " (" + inner.Type + ")"
			}
			return inner.Message
		case json.Unmarshal(shaped.Error, &plain) == nil && plain != "":
			return plain
		case shaped.Message != "":
			return shaped.Message
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > errorBodyKept {
		text = text[:errorBodyKept]
	}
	text = strings.ToValidUTF8(text, "")
	if text == "" || !utf8.ValidString(text) {
		return "(no message)"
	}
	return text
}

// retryAfter is the wait a 429 asks for; defaultRetryWait without one.
func retryAfter(h http.Header) time.Duration {
	if d, ok := sdk.RetryAfter(h, time.Now()); ok {
		return d
	}
	return defaultRetryWait
}
