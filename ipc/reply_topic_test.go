package ipc

import "testing"

func TestIsReplyTopic(t *testing.T) {
	for topic, want := range map[string]bool{
		"llm.v1.stream.replay":                   true,
		"tool.v1.execute.result":                 true,
		"tool.v1.execute.read_file.result":       true,
		"prompt_builder.v1.response.assemble":    true,
		"prompt_builder.v1.hook_response.x":      true,
		"session.v1.response.get_messages.react": true,
		"registry.v1.response.get_providers.cli": true,
		"static.v1.response.context.notes":       true,
		"astrid.v1.approval.response.r1":         false, // a person's answer: from a frontend, never a handler's
		"tool.v1.execute.read_file":              false,
		"tool.v1.request.execute":                false,
		"llm.v1.request.generate.replay":         false,
		"user.v1.prompt":                         false,
		"session.v1.request.get_messages":        false,
		"prompt_builder.v1.assemble":             false,
		"notes.v1.note":                          false,
		"llm.v1.streamer":                        false,
		"response.v1.x":                          false,
	} {
		if got := IsReplyTopic(topic); got != want {
			t.Errorf("IsReplyTopic(%q) = %v, want %v", topic, got, want)
		}
	}
}
