package ipc

// The prompt convention (docs/mcp.md): prompt templates a capsule
// offers, which `astrid mcp serve` serves as MCP prompts. A describe
// fan-out lists them: {} on PromptRequestDescribeTopic, each capsule
// answering a PromptDescribeResponse on PromptDescribeResponseTopic(its
// id). Getting one is a request (DESIGN §4b) to the owning capsule on
// PromptGetTopic(its id), answered on PromptGetResultTopic. All travel as
// untagged JSON.

const (
	// PromptRequestDescribeTopic asks every prompt capsule to describe its
	// prompts (payload {}).
	PromptRequestDescribeTopic = "prompt.v1.request.describe"
	// PromptGetResultTopic carries the answers to gets (replies).
	PromptGetResultTopic = "prompt.v1.get.result"
)

// PromptDescribeResponseTopic is where capsule answers a prompt describe.
func PromptDescribeResponseTopic(capsule string) string {
	return "prompt.v1.response.describe." + capsule
}

// PromptGetTopic is where capsule is asked to fill in one of its prompts.
func PromptGetTopic(capsule string) string { return "prompt.v1.get." + capsule }

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	// Values are the values the argument may take: the completions
	// offered for it (none listed: none offered, unless Complete).
	Values []string `json:"values,omitempty"`
	// Complete says the capsule completes the argument itself (the
	// completion convention, ipc/completion.go).
	Complete bool `json:"complete,omitempty"`
}

// PromptDescriptor is one prompt as its capsule describes it.
type PromptDescriptor struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptDescribeResponse is one capsule's answer to a prompt describe.
type PromptDescribeResponse struct {
	Prompts []PromptDescriptor `json:"prompts"`
}

// PromptGetRequest asks for a prompt filled in with arguments; its answer
// echoes RequestID.
type PromptGetRequest struct {
	RequestID string            `json:"request_id,omitempty"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// The kinds of PromptContent.
const (
	PromptContentText     = "text"
	PromptContentImage    = "image"
	PromptContentAudio    = "audio"
	PromptContentResource = "resource"
)

// PromptContent is one message's content: Text for "text", Data and
// MimeType for "image" and "audio" (base64 in JSON), Resource for
// "resource" (an embedded resource).
type PromptContent struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Data     []byte            `json:"data,omitempty"`
	MimeType string            `json:"mime_type,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
}

// PromptMessage is one message of a filled-in prompt; Role is "user" or
// "assistant".
type PromptMessage struct {
	Role    string        `json:"role"`
	Content PromptContent `json:"content"`
}

// PromptGetResult answers a get: the messages, or NotFound or Error
// saying why there are none.
type PromptGetResult struct {
	// RequestID is the request's, echoed.
	RequestID   string          `json:"request_id,omitempty"`
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages,omitempty"`
	NotFound    bool            `json:"not_found,omitempty"`
	Error       string          `json:"error,omitempty"`
}
