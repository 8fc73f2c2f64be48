package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The fake model calls each agent's own file-reading tool with the
// argument its schema names, then answers once a tool result comes back,
// in each of the three APIs.
func TestFakeModelCallsTheAgentsToolThenAnswers(t *testing.T) {
	srv, _ := startFake("/ws/README.md")
	defer srv.Close()
	post := func(path, body string) string {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	for _, c := range []struct{ path, body, want string }{
		{"/v1/chat/completions", `{"stream":true,"tools":[{"type":"function","function":{"name":"read_file","parameters":{"properties":{"file_path":{}}}}}]}`, `"name":"read_file","arguments":"{\"file_path\":\"README.md\"}"`},
		{"/v1/chat/completions", `{"stream":false,"tools":[{"type":"function","function":{"name":"read","parameters":{"properties":{"filePath":{}}}}}]}`, `{\"filePath\":\"/ws/README.md\"}`},
		{"/v1/chat/completions", `{"stream":true,"messages":[{"role":"tool","content":"x"}]}`, `a README.`},
		{"/v1/messages", `{"stream":true,"tools":[{"name":"Read","input_schema":{"properties":{"file_path":{}}}}]}`, `"partial_json":"{\"file_path\":\"/ws/README.md\"}"`},
		{"/v1/messages", `{"stream":false,"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`, answer},
		{"/v1/responses", `{"tools":[{"type":"function","name":"shell","parameters":{"properties":{"command":{}}}}]}`, `"arguments":"{\"command\":[\"cat\",\"README.md\"]}"`},
		{"/v1/responses", `{"input":[{"type":"function_call_output"}]}`, answer},
	} {
		if got := post(c.path, c.body); !strings.Contains(got, c.want) {
			t.Errorf("%s %s:\n%s\nwant %s", c.path, c.body, got, c.want)
		}
	}
}
