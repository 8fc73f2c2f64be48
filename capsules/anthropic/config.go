package anthropic

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/astrid-go/astrid/sdk"
)

// Defaults of the [env] values (Capsule.toml says the same).
const (
	// DefaultModel is the model a request without one uses: Anthropic's
	// "efficient model for coding and agents" in the SDK's model list.
	DefaultModel           = "claude-sonnet-5-5"
	defaultMaxOutputTokens = 8192
	defaultStreamTimeout   = 120 * time.Second
	defaultContextWindow   = 200000
	// defaultBaseURL is the API's own address; an unset base_url means it.
	defaultBaseURL = "https://api.anthropic.com"
)

// setKeyCommand is what a person runs to give the capsule its key.
const setKeyCommand = "printf %s sk-ant-… | astrid capsule env set astrid-capsule-anthropic api_key"

// settings are the capsule's [env] values, read per request.
type settings struct {
	apiKey          string
	baseURL         string // "" for the API's own
	model           string
	maxOutputTokens int64
	temperature     *float64
	streamTimeout   time.Duration
	contextWindow   uint64
	// windowSet: the operator named a window other than the default,
	// which then wins over the model list's max_input_tokens.
	windowSet bool
	// problems are [env] values that did not parse (their defaults were
	// used), for the log.
	problems []string
}

func readSettings(c *sdk.Call) settings {
	get := func(key string) string {
		v, _ := c.Config(key)
		return strings.TrimSpace(v)
	}
	s := settings{
		apiKey:          get("api_key"),
		baseURL:         strings.TrimRight(get("base_url"), "/"),
		model:           get("model"),
		maxOutputTokens: defaultMaxOutputTokens,
		streamTimeout:   defaultStreamTimeout,
		contextWindow:   defaultContextWindow,
	}
	if s.model == "" {
		s.model = DefaultModel
	}
	if v := get("max_output_tokens"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			s.maxOutputTokens = n
		} else {
			s.problems = append(s.problems, fmt.Sprintf("max_output_tokens %q is not a positive whole number", v))
		}
	}
	if v := get("temperature"); v != "" {
		if t, err := strconv.ParseFloat(v, 64); err == nil && t >= 0 && t <= 1 {
			s.temperature = &t
		} else {
			s.problems = append(s.problems, fmt.Sprintf("temperature %q is not a number from 0 to 1", v))
		}
	}
	if v := get("stream_timeout_secs"); v != "" {
		if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 && n <= 1e6 {
			s.streamTimeout = time.Duration(n * float64(time.Second))
		} else {
			s.problems = append(s.problems, fmt.Sprintf("stream_timeout_secs %q is not a number of seconds from 0 to 1000000", v))
		}
	}
	if v := get("context_window"); v != "" {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil && n > 0 {
			// The manifest's default may arrive as a value: only another
			// figure is the operator's word over the API's model list.
			s.contextWindow, s.windowSet = n, n != defaultContextWindow
		} else {
			s.problems = append(s.problems, fmt.Sprintf("context_window %q is not a positive whole number", v))
		}
	}
	return s
}

// apiBase is the base URL requests go to.
func (s settings) apiBase() string {
	if s.baseURL == "" {
		return defaultBaseURL
	}
	return s.baseURL
}

// host is the API's host, for messages.
func (s settings) host() string {
	if u, err := url.Parse(s.apiBase()); err == nil && u.Host != "" {
		return u.Host
	}
	return s.apiBase()
}

// ready says whether a request can be made: a key, or a base_url of the
// operator's (a local server or a proxy may need none). why names the
// command that fixes it.
func (s settings) ready() (ok bool, why string) {
	if s.apiKey != "" || s.baseURL != "" {
		return true, ""
	}
	return false, "no Anthropic API key: run `" + setKeyCommand + "` (or set ANTHROPIC_API_KEY)"
}
