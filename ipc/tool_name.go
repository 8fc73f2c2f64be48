package ipc

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidToolName is wrapped by every tool-name validation error.
var ErrInvalidToolName = errors.New("invalid tool name")

// MaxToolNameBytes is the longest tool name whose result topic,
// tool.v1.execute.<name>.result, fits MaxTopicBytes.
const MaxToolNameBytes = MaxTopicBytes - len(toolExecutePrefix) - len(toolResultSuffix)

// MaxLLMToolNameBytes is the longest tool name LLM APIs accept.
const MaxLLMToolNameBytes = 64

// ValidateToolName checks a tool name as the router does before splicing it
// into a topic: non-empty, at most MaxToolNameBytes, and only ASCII letters,
// digits, '-', '_' and ':'. A dot would add topic segments (topic
// injection), so it is refused like every other byte. Upstream admits any
// Unicode letter or digit; this runtime admits ASCII only.
func ValidateToolName(name string) error {
	if validToolName(name) {
		return nil
	}
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidToolName)
	}
	if len(name) > MaxToolNameBytes {
		return fmt.Errorf("%w: %.40q… is %d bytes, the limit is %d", ErrInvalidToolName, name, len(name), MaxToolNameBytes)
	}
	for i := 0; i < len(name); i++ {
		if !segmentByte(name[i]) {
			return fmt.Errorf("%w: %q has %q; tool names use ASCII letters, digits, '-', '_' and ':'", ErrInvalidToolName, name, name[i])
		}
	}
	return nil
}

// validToolName is ValidateToolName's verdict without its error: a topic
// that is no tool's (a result topic, say) is told apart on every forwarded
// tool envelope, and an error formatted with %q cost more than the rest of
// that check.
func validToolName(name string) bool {
	if name == "" || len(name) > MaxToolNameBytes {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !segmentByte(name[i]) {
			return false
		}
	}
	return true
}

// SplitToolName splits a name at its first ':' into a server and a tool, as
// MCP tools are named (<server>:<tool>). Without a ':' the server is "".
func SplitToolName(name string) (server, tool string) {
	server, tool, ok := strings.Cut(name, ":")
	if !ok {
		return "", name
	}
	return server, tool
}

// LLMToolName spells a valid tool name the way LLM APIs accept
// ([A-Za-z0-9_-]{1,64}): each ':' becomes "__". ToolNameFromLLM maps back.
//
// The mapping is ambiguous for some names (read__file and read:file both
// spell read__file; a_:b spells a___b, which reads back as a:_b), so a name
// that would not survive the round trip is refused, as is one that ends up
// longer than 64 bytes. Callers offering tools to a model leave such a tool
// out and report it; they never hand the model a name that maps back to a
// different tool.
func LLMToolName(name string) (string, error) {
	if err := ValidateToolName(name); err != nil {
		return "", err
	}
	spelled := strings.ReplaceAll(name, ":", "__")
	if len(spelled) > MaxLLMToolNameBytes {
		return "", fmt.Errorf("%w: %q spells %d bytes for an LLM, the limit is %d", ErrInvalidToolName, name, len(spelled), MaxLLMToolNameBytes)
	}
	if ToolNameFromLLM(spelled) != name {
		return "", fmt.Errorf("%w: %q cannot be told apart from another name once ':' is spelled \"__\" for an LLM", ErrInvalidToolName, name)
	}
	return spelled, nil
}

// ToolNameFromLLM maps a name produced by LLMToolName back to the tool name:
// each "__", read left to right, becomes ':'.
func ToolNameFromLLM(llmName string) string {
	return strings.ReplaceAll(llmName, "__", ":")
}
