package static

import "encoding/json"

// Request is what a requester may put in a static request's data; every
// field is optional and the payload may be anything.
type Request struct {
	// RequestID is echoed in every answer, to tell answers to concurrent
	// requests apart.
	RequestID string `json:"request_id,omitempty"`
}

// ContextResponse answers static.v1.request.context.
type ContextResponse struct {
	Capsule      string        `json:"capsule"`
	RequestID    string        `json:"request_id,omitempty"`
	ContextFiles []ContextFile `json:"context_files"`
}

// ContextFile is one [[context_file]] with its text.
type ContextFile struct {
	Name    string `json:"name"`
	File    string `json:"file"`
	Content string `json:"content"`
}

// SkillsResponse answers static.v1.request.skills.
type SkillsResponse struct {
	Capsule   string  `json:"capsule"`
	RequestID string  `json:"request_id,omitempty"`
	Skills    []Skill `json:"skills"`
}

// Skill is one [[skill]] with its text.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	File        string `json:"file"`
	Content     string `json:"content"`
}

// CommandsResponse answers static.v1.request.commands.
type CommandsResponse struct {
	Capsule   string    `json:"capsule"`
	RequestID string    `json:"request_id,omitempty"`
	Commands  []Command `json:"commands"`
}

// Command is one [[command]]; Definition is its declarative command file
// (TOML) as JSON, when it names one.
type Command struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Kind        string          `json:"kind"`
	File        string          `json:"file,omitempty"`
	Definition  json.RawMessage `json:"definition,omitempty"`
}
