package hostapi

import "encoding/json"

// Elicit asks the person a question.
type Elicit interface {
	// Elicit asks the invoking principal's person, through a frontend, for
	// one value (q), and waits for the answer. A select answer is one of
	// q.Options; an array answer is a list (Values); any other answer is
	// Value. No frontend, or no answer within the host's elicit window, is
	// CodeTimeout; the person declining to answer is CodeDeclined; the
	// call's cancellation is CodeCancelled. A secret's answer is handed to
	// the capsule alone: the host neither logs it nor publishes it again.
	Elicit(q ElicitRequest) (ElicitAnswer, error)
}

// ElicitKind is what kind of value a question asks for.
type ElicitKind string

// The kinds of value Elicit asks for.
const (
	ElicitText   ElicitKind = "text"
	ElicitSecret ElicitKind = "secret" // typed without echo, never logged
	ElicitSelect ElicitKind = "select" // one of Options
	ElicitArray  ElicitKind = "array"  // a list of values
	// ElicitForm asks several typed values at once: Schema is MCP's
	// requested schema of a form (ipc.ParseElicitSchema says which), the
	// answer is Content. Prompt is the form's message.
	ElicitForm ElicitKind = "form"
)

// ElicitRequest is one question.
type ElicitRequest struct {
	// Key names the value (say "API_KEY"): 1 to MaxElicitKey bytes of
	// letters, digits, '_', '-' and '.'.
	Key  string     `json:"key"`
	Kind ElicitKind `json:"kind"`
	// Prompt is what the person is asked (Key when empty); Description
	// says more. Both are shown escaped (control characters removed).
	Prompt      string `json:"prompt,omitempty"`
	Description string `json:"description,omitempty"`
	// Options are a select's choices (1 to MaxElicitOptions of them).
	Options []string `json:"options,omitempty"`
	// Default is offered to the person (a select's must be an option; a
	// secret has none).
	Default *string `json:"default,omitempty"`
	// Schema is a form's fields (Kind form only).
	Schema json.RawMessage `json:"schema,omitempty"`
}

// ElicitAnswer is the person's answer: Values for an array, Content (a
// JSON object of the values given, by field) for a form, Value otherwise
// (an empty Value is an answer).
type ElicitAnswer struct {
	Value   string          `json:"value,omitempty"`
	Values  []string        `json:"values,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
}

// Elicit limits on a question (an answer's are ipc.MaxElicitAnswer and
// ipc.MaxElicitValues): together they stay far below the bus's message cap.
const (
	MaxElicitKey     = 128
	MaxElicitPrompt  = 1024 // Prompt and Description, each, in bytes
	MaxElicitOptions = 256
	MaxElicitOption  = 256 // one option, in bytes
)
