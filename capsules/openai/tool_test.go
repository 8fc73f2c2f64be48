package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// A tool's schema reaches the request as its own bytes (keys in its order,
// nothing re-encoded), its name and description escaped as JSON; a schema
// that is not a JSON object is refused by name.
func TestChatToolPassesTheSchemaThrough(t *testing.T) {
	desc := "Reads \"a file\"\n<and> returns it"
	schema := `{"type":"object","required":["file_path"],"properties":{"file_path":{"type":"string","description":"é \u2028"}}}`
	tool, err := chatTool(ipc.LLMToolDefinition{Name: "read_file", Description: &desc, InputSchema: json.RawMessage(" " + schema + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"parameters":`+schema) {
		t.Fatalf("the schema was not passed through as written: %s", got)
	}
	var back struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(got, &back); err != nil || back.Type != "function" || back.Function.Name != "read_file" || back.Function.Description != desc {
		t.Fatalf("%v: %s", err, got)
	}

	none, err := chatTool(ipc.LLMToolDefinition{Name: "now"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(none); !strings.Contains(string(got), `"parameters":{"type":"object"}`) || strings.Contains(string(got), "description") {
		t.Fatalf("no schema, no description: %s", got)
	}

	for _, bad := range []string{`[]`, `"object"`, `{"type":`, `{} {}`, `null`, `  `} {
		_, err := chatTool(ipc.LLMToolDefinition{Name: "t", InputSchema: json.RawMessage(bad)})
		if strings.TrimSpace(bad) == "" {
			if err != nil {
				t.Errorf("blank schema: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "tool t: input_schema is not a JSON object") {
			t.Errorf("schema %q: %v", bad, err)
		}
	}
}
