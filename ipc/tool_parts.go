package ipc

import (
	"fmt"
	"strings"
)

// The kinds of a tool result's content part.
const (
	ToolPartText     = "text"
	ToolPartImage    = "image"
	ToolPartAudio    = "audio"
	ToolPartResource = "resource"
)

// Bounds of a result's parts. The bus carries a message of at most 1 MiB,
// and base64 grows data by a third: 512 KiB of data leaves room for the
// rest of the result.
const (
	MaxParts        = 32
	MaxPartsData    = 512 << 10
	maxPartMime     = 127
	maxPartURI      = 2048
	maxPartsDataB64 = (MaxPartsData + 2) / 3 * 4
)

// ToolPart is one typed item of a tool's result: text, an image, audio
// or an embedded resource (text or binary). Parts are additive: the
// result's Content stays the text the model reads, naming what a part
// holds that it cannot read (see ToolPartPlaceholder); a frontend that can
// show or pass on typed content (astrid mcp serve) reads the parts.
type ToolPart struct {
	Type     string `json:"type"`
	MimeType string `json:"mime_type,omitempty"`
	// Data is an image's, audio's or binary resource's bytes (base64 on
	// the wire).
	Data []byte `json:"data,omitempty"`
	// URI names an embedded resource.
	URI string `json:"uri,omitempty"`
	// Text is a text part's text, or a text resource's.
	Text string `json:"text,omitempty"`
}

// ValidateToolParts checks a result's parts: at most MaxParts, each of a known
// kind with what that kind needs, at most MaxPartsData bytes of data in
// all, MIME types of the type/subtype shape.
func ValidateToolParts(parts []ToolPart) error {
	if len(parts) > MaxParts {
		return fmt.Errorf("a tool result has %d content parts; at most %d are allowed", len(parts), MaxParts)
	}
	total := 0
	for i, p := range parts {
		total += len(p.Data)
		if total > MaxPartsData {
			return fmt.Errorf("content part %d: the parts' data exceeds %d bytes (%d base64 characters) in all", i, MaxPartsData, maxPartsDataB64)
		}
		if err := p.validate(); err != nil {
			return fmt.Errorf("content part %d: %w", i, err)
		}
	}
	return nil
}

func (p ToolPart) validate() error {
	if p.MimeType != "" && !validMime(p.MimeType) {
		return fmt.Errorf("MIME type %.40q is not of the form type/subtype (at most %d characters)", p.MimeType, maxPartMime)
	}
	if len(p.URI) > maxPartURI {
		return fmt.Errorf("URI is %d bytes; at most %d are allowed", len(p.URI), maxPartURI)
	}
	switch p.Type {
	case ToolPartText:
		if len(p.Data) > 0 || p.URI != "" {
			return fmt.Errorf("a text part carries only text")
		}
	case ToolPartImage, ToolPartAudio:
		if len(p.Data) == 0 {
			return fmt.Errorf("an %s part needs data", p.Type)
		}
		if !strings.HasPrefix(p.MimeType, p.Type+"/") {
			return fmt.Errorf("an %s part needs an %s/* MIME type, not %.40q", p.Type, p.Type, p.MimeType)
		}
	case ToolPartResource:
		if p.URI == "" {
			return fmt.Errorf("a resource part needs a URI")
		}
		if len(p.Data) > 0 && p.Text != "" {
			return fmt.Errorf("a resource part is text or data, not both")
		}
	default:
		return fmt.Errorf("unknown content part type %.20q (want text, image, audio or resource)", p.Type)
	}
	return nil
}

// validMime reports whether m looks like type/subtype: one slash, both
// sides non-empty, printable ASCII without spaces.
func validMime(m string) bool {
	if len(m) > maxPartMime {
		return false
	}
	slash := strings.IndexByte(m, '/')
	if slash <= 0 || slash == len(m)-1 || strings.Count(m, "/") != 1 {
		return false
	}
	for i := 0; i < len(m); i++ {
		if c := m[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// ToolPartPlaceholder is how a part reads in a result's Content, for a model
// that reads text only: a text part's text; a text resource's text; a
// short note naming an image's, audio's or binary resource's kind, MIME
// type and size.
func ToolPartPlaceholder(p ToolPart) string {
	switch p.Type {
	case ToolPartText:
		return p.Text
	case ToolPartResource:
		if len(p.Data) == 0 {
			return p.Text
		}
		return fmt.Sprintf("[resource %s %s, %d bytes]", p.URI, p.MimeType, len(p.Data))
	default:
		return fmt.Sprintf("[%s %s, %d bytes]", p.Type, p.MimeType, len(p.Data))
	}
}

// ToolPartsText is the parts as a model reads them: their placeholders, one a
// line.
func ToolPartsText(parts []ToolPart) string {
	lines := make([]string, len(parts))
	for i, p := range parts {
		lines[i] = ToolPartPlaceholder(p)
	}
	return strings.Join(lines, "\n")
}
