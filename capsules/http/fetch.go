package http

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the capsule's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// Size caps of what the tool returns (after reduction). The default is
// upstream's soft cap; the ceiling keeps a result, JSON-escaped (each " or
// \ costs two bytes) and carried again by the router, under the bus's
// 1 MiB message limit.
const (
	defaultMaxBytes = 200 << 10
	maxMaxBytes     = 256 << 10
)

// The format argument's values.
const (
	formatText = "text"
	formatRaw  = "raw"
)

// New returns the capsule's code.
func New() *sdk.Capsule {
	c := sdk.New("Fetch web pages and documents over HTTP(S)")
	sdk.Tool(c, "fetch_url", "Fetch an http:// or https:// URL with GET. Returns the status, the content type and the body: "+
		"HTML reduced to readable text (links as [n], their URLs listed at the end), JSON and text as received. "+
		"4xx and 5xx answers are returned, not errors. Loopback, private and cloud-metadata addresses are refused.", fetchURL)
	return c
}

type fetchArgs struct {
	URL      string `json:"url" desc:"the http:// or https:// URL to fetch"`
	MaxBytes *int   `json:"max_bytes,omitempty" desc:"most bytes of text to return (default 204800, at most 262144); longer text is cut, saying how much was left out"`
	Format   string `json:"format,omitempty" desc:"text (default: HTML reduced to readable text) or raw (HTML as received)"`
}

func fetchURL(c *sdk.Call, a fetchArgs) (string, error) {
	u, err := checkURL(a.URL)
	if err != nil {
		return "", err
	}
	limit := defaultMaxBytes
	if a.MaxBytes != nil {
		if *a.MaxBytes < 1 || *a.MaxBytes > maxMaxBytes {
			return "", fmt.Errorf("max_bytes is %d; it must be between 1 and %d", *a.MaxBytes, maxMaxBytes)
		}
		limit = *a.MaxBytes
	}
	format := strings.ToLower(strings.TrimSpace(a.Format))
	switch format {
	case "", formatText, formatRaw:
	default:
		return "", fmt.Errorf("format %q is neither %q nor %q", a.Format, formatText, formatRaw)
	}
	target := u.String()
	resp, err := c.HTTPDo(hostapi.HTTPRequest{
		Method: "GET",
		URL:    target,
		Headers: map[string][]string{
			"Accept":     {"text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5"},
			"User-Agent": {"astrid-fetch_url/0.1"},
		},
	})
	if err != nil {
		return "", fetchError(u.Redacted(), err)
	}
	contentType := header(resp.Headers, "Content-Type")
	text := truncate(render(resp.Body, contentType, format, u), limit)
	return fmt.Sprintf("Status: %d\nContent-Type: %s\n\n%s", resp.Status, orUnknown(contentType), text), nil
}

// fetchError says why a fetch failed in terms the model can act on: a
// refusal is final (another spelling of the address will be refused too);
// a timeout or a network error may pass.
func fetchError(shown string, err error) error {
	switch hostapi.CodeOf(err) {
	case hostapi.CodeDenied:
		return fmt.Errorf("fetch_url %s: refused by the host's egress rules (only public addresses, and endpoints the operator allowed, may be fetched; every redirect is checked again): %w", shown, err)
	case hostapi.CodeTooLarge:
		return fmt.Errorf("fetch_url %s: the response is larger than the host accepts (%d bytes); none of it can be shown: %w", shown, hostapi.MaxHTTPBody, err)
	case hostapi.CodeIO:
		// net/http names its own timeouts only in the text; the host
		// passes them on as CodeIO.
		if msg := err.Error(); strings.Contains(msg, "Client.Timeout") || strings.Contains(msg, "deadline exceeded") {
			return fmt.Errorf("fetch_url %s: timed out (the host's time limit for a request passed): %w", shown, err)
		}
		return fmt.Errorf("fetch_url %s: %w", shown, err)
	}
	return fmt.Errorf("fetch_url %s: %w", shown, err)
}

// header is the first value of the header name, matched
// case-insensitively (a wasm host's JSON keeps whatever case it was given).
func header(h map[string][]string, name string) string {
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}
