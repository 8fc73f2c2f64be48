package ipc_test

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

func ExampleDecodePayload() {
	for _, raw := range []string{
		`{"type":"tool_execute_request","call_id":"c1","tool_name":"read_file","arguments":{"path":"go.mod"}}`,
		`{"type":"user_input"}`, // a known tag missing its text: kept as custom
		`{"note":"no tag at all"}`,
	} {
		switch p := ipc.DecodePayload(json.RawMessage(raw)).(type) {
		case ipc.ToolExecuteRequest:
			fmt.Printf("call %s of %s with %s\n", p.CallID, p.ToolName, p.Arguments)
		case ipc.Custom:
			fmt.Printf("custom %s\n", p.Data)
		}
	}
	// Output:
	// call c1 of read_file with {"path":"go.mod"}
	// custom {"type":"user_input"}
	// custom {"note":"no tag at all"}
}

func ExampleEncodePayload() {
	raw, err := ipc.EncodePayload(ipc.ToolExecuteResult{
		CallID: "c1",
		Result: ipc.ToolCallError("c1", "file not found: go.sum"),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(raw))
	// Output:
	// {"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"file not found: go.sum","is_error":true}}
}

func ExampleGuestBytes() {
	fmt.Println(string(ipc.GuestBytes(json.RawMessage(`{"type":"custom","data":{"tools":[]}}`))))
	fmt.Println(string(ipc.GuestBytes(json.RawMessage(`{"type":"raw_json","method":"GetStatus"}`))))
	fmt.Println(string(ipc.GuestBytes(json.RawMessage(`{"type":"connect"}`))))
	// Output:
	// {"tools":[]}
	// {"method":"GetStatus"}
	// {"type":"connect"}
}

func ExampleToolExecuteTopic() {
	name := "fs:read_file"
	if err := ipc.ValidateToolName(name); err != nil {
		panic(err)
	}
	fmt.Println(ipc.ToolExecuteTopic(name))
	fmt.Println(ipc.ToolResultTopic(name))
	fmt.Println(ipc.MatchInterceptor(ipc.ToolResultPattern, ipc.ToolResultTopic(name)))
	fmt.Println(ipc.MatchInterceptor(ipc.ToolResultPattern, ipc.ToolExecuteResultTopic))
	fmt.Println(ipc.ValidateToolName("foo.bar") != nil)
	// Output:
	// tool.v1.execute.fs:read_file
	// tool.v1.execute.fs:read_file.result
	// true
	// false
	// true
}

func ExampleLLMToolName() {
	spelled, err := ipc.LLMToolName("github:create_issue")
	fmt.Println(spelled, err)
	fmt.Println(ipc.ToolNameFromLLM(spelled))
	_, err = ipc.LLMToolName("read__file") // would come back as read:file
	fmt.Println(err != nil)
	// Output:
	// github__create_issue <nil>
	// github:create_issue
	// true
}

func ExampleParseToolDescribeResponse() {
	resp, err := ipc.ParseToolDescribeResponse(json.RawMessage(
		`{"data":{"tools":[{"name":"write_file","description":"Write a file","input_schema":{"type":"object","mutable":true}}]}}`))
	if err != nil {
		panic(err)
	}
	for _, tool := range resp.Tools {
		fmt.Println(tool.Name, tool.Mutable)
	}
	// Output:
	// write_file true
}

// A payload is valid when it is one JSON value in valid UTF-8; the
// dispatcher refuses anything else at publish.
func ExampleValidJSON() {
	for _, p := range []string{`{"type":"connect"}`, `{"a":1} {"b":2}`, "\"\xff\"", `[1,2,]`} {
		fmt.Printf("%q %v\n", p, ipc.ValidJSON([]byte(p)))
	}
	// Output:
	// "{\"type\":\"connect\"}" true
	// "{\"a\":1} {\"b\":2}" false
	// "\"\xff\"" false
	// "[1,2,]" false
}

// Interceptors match with MatchInterceptor (`*` is exactly one segment);
// subscriptions and ACL patterns with MatchRoute, where a trailing `.*`
// also matches deeper topics.
func ExampleMatchRoute() {
	fmt.Println(ipc.MatchInterceptor("tool.v1.execute.*", "tool.v1.execute.read_file"))
	fmt.Println(ipc.MatchInterceptor("tool.v1.execute.*", "tool.v1.execute.read_file.result"))
	fmt.Println(ipc.MatchRoute("tool.v1.execute.*", "tool.v1.execute.read_file.result"))
	fmt.Println(ipc.ValidateTopic("tool.v1..execute") != nil)
	// Output:
	// true
	// false
	// true
	// true
}

// A tool call travels as a ToolExecuteRequest and comes back as a
// ToolExecuteResult; both encode in the one tagged form.
func ExampleToolExecuteRequest() {
	raw, err := ipc.ToolExecuteRequest{CallID: "c1", ToolName: "read_file", Arguments: json.RawMessage(`{ "file_path": "go.mod" }`)}.MarshalJSON()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(raw))
	var req ipc.ToolExecuteRequest
	if err := req.UnmarshalJSON([]byte(`{"type":"tool_execute_request","call_id":"c2","tool_name":"echo"}`)); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"type":"tool_execute_request","call_id":"c1","tool_name":"read_file","arguments":{"file_path":"go.mod"}}
	// tool_execute_request: missing field arguments
}
