package ipc

// The completion convention (docs/mcp.md): a capsule that completes a
// prompt argument or a resource template variable itself (one it marks
// Complete in its description) is asked by request (DESIGN §4b) on
// CompletionTopic(its id) and answers on CompletionResultTopic. Untagged
// JSON.

// CompletionResultTopic carries the answers to completion requests.
const CompletionResultTopic = "completion.v1.complete.result"

// CompletionTopic is where capsule is asked to complete a value.
func CompletionTopic(capsule string) string { return "completion.v1.complete." + capsule }

// CompletionRequest asks for the values that may complete Value: of
// argument Argument of prompt Prompt, or of variable Argument of the
// resource template Template (one of the two is set). Its answer echoes
// RequestID.
type CompletionRequest struct {
	RequestID string `json:"request_id,omitempty"`
	Prompt    string `json:"prompt,omitempty"`
	Template  string `json:"template,omitempty"`
	Argument  string `json:"argument"`
	Value     string `json:"value"`
	// Context holds the arguments or variables the client resolved
	// already.
	Context map[string]string `json:"context,omitempty"`
}

// CompletionResult answers a completion request: at most 100 values
// (more are cut), Total when the capsule knows how many match.
type CompletionResult struct {
	// RequestID is the request's, echoed.
	RequestID string   `json:"request_id,omitempty"`
	Values    []string `json:"values"`
	Total     int      `json:"total,omitempty"`
	Error     string   `json:"error,omitempty"`
}
