package openai

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/astrid-go/astrid/sdk"
)

// The values the code uses for [env] keys that are empty (the manifest's
// default for most of them, which the kernel fills in when unset).
const (
	DefaultBaseURL       = "https://api.openai.com/v1"
	DefaultModel         = "gpt-5.4-mini"
	defaultStreamTimeout = 120 * time.Second
	// The describe sizes spec §6.2 gives when the operator names none.
	defaultContextWindow   = 128000
	defaultMaxOutputTokens = 8192
)

// CapsuleID is the capsule's id, as `astrid capsule env set` names it.
const CapsuleID = "astrid-capsule-openai"

// setKeyCommand is how an operator sets the API key, for the messages
// that need one.
const setKeyCommand = "printf %s sk-… | astrid capsule env set " + CapsuleID + " api_key (or export OPENAI_API_KEY)"

// settings are the capsule's [env] values, parsed.
type settings struct {
	apiKey  string
	baseURL string
	// custom is set when the operator chose the base URL: a server of
	// their own, which may need no key.
	custom          bool
	model           string
	maxOutputTokens int64 // 0: not sent
	temperature     float64
	hasTemperature  bool
	streamTimeout   time.Duration
	contextWindow   uint64
	// windowSet: the operator named a window ([env] context_window other
	// than the default), which then wins over what the server's model
	// list says.
	windowSet bool
	// problems are the values that did not parse (their defaults apply),
	// worth a warning.
	problems []string
}

// config reads the settings through the call.
func config(c *sdk.Call) settings {
	get := func(key string) string {
		v, _ := c.Config(key)
		return strings.TrimSpace(v)
	}
	return parseSettings(get)
}

func parseSettings(get func(string) string) settings {
	s := settings{
		apiKey:        get("api_key"),
		baseURL:       strings.TrimRight(get("base_url"), "/"),
		model:         get("model"),
		streamTimeout: defaultStreamTimeout,
		contextWindow: defaultContextWindow,
	}
	if s.baseURL == "" || s.baseURL == DefaultBaseURL {
		s.baseURL = DefaultBaseURL
	} else {
		s.custom = true
	}
	if s.model == "" && !s.custom {
		s.model = DefaultModel
	}
	if v := get("max_output_tokens"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			s.problems = append(s.problems, fmt.Sprintf("max_output_tokens %q is not a positive whole number; the server's default applies", v))
		} else {
			s.maxOutputTokens = n
		}
	}
	if v := get("temperature"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 2 {
			s.problems = append(s.problems, fmt.Sprintf("temperature %q is not a number from 0 to 2; the server's default applies", v))
		} else {
			s.temperature, s.hasTemperature = f, true
		}
	}
	if v := get("stream_timeout_secs"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 1_000_000 {
			s.problems = append(s.problems, fmt.Sprintf("stream_timeout_secs %q is not a whole number from 1 to 1000000; %d applies", v, int(defaultStreamTimeout.Seconds())))
		} else {
			s.streamTimeout = time.Duration(n) * time.Second
		}
	}
	if v := get("context_window"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < 1 {
			s.problems = append(s.problems, fmt.Sprintf("context_window %q is not a positive whole number; %d applies", v, defaultContextWindow))
		} else {
			// The manifest's default may arrive as a value: only another
			// figure is the operator's word over the server's list.
			s.contextWindow, s.windowSet = n, n != defaultContextWindow
		}
	}
	return s
}

// notReady says why a request cannot be sent as configured ("" when it
// can): OpenAI itself needs a key; a server of the operator's own may not,
// but its URL must be one.
func (s settings) notReady() string {
	if s.custom {
		u, err := url.Parse(s.baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Sprintf("base_url %q is not an http(s) URL: printf %%s http://localhost:11434/v1 | astrid capsule env set %s base_url", s.baseURL, CapsuleID)
		}
		return ""
	}
	if s.apiKey == "" {
		return "no OpenAI API key: " + setKeyCommand
	}
	return ""
}

// host is the base URL's host, for messages.
func (s settings) host() string {
	if u, err := url.Parse(s.baseURL); err == nil && u.Host != "" {
		return u.Host
	}
	return s.baseURL
}
