package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
)

// answer is the model's final text.
const answer = "It holds a README."

// fakeModel serves the OpenAI chat completions API (streamed or not),
// the OpenAI Responses API (streamed) and the Anthropic messages API
// (streamed or not). A request that carries no tool result is answered
// with one call of its file-reading tool on README.md (readme is its
// absolute path); one that carries a tool result with answer. It keeps no
// state.
type fakeModel struct {
	readme   string
	requests atomic.Int64
}

// readTools are file-reading tool names, most specific first.
var readTools = []string{"read_file", "Read", "read", "view", "developer__text_editor", "text_editor", "shell", "exec_command"}

// toolDef is a tool as any of the three APIs offers it.
type toolDef struct {
	Type     string          `json:"type"`
	Name     string          `json:"name"`
	Params   json.RawMessage `json:"parameters"`
	Schema   json.RawMessage `json:"input_schema"`
	Function *struct {
		Name   string          `json:"name"`
		Params json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// pickCall chooses the tool to call and its arguments.
func (f *fakeModel) pickCall(tools []toolDef) (string, string) {
	byName := map[string]json.RawMessage{}
	for _, t := range tools {
		switch {
		case t.Function != nil:
			byName[t.Function.Name] = t.Function.Params
		case t.Schema != nil:
			byName[t.Name] = t.Schema
		default:
			byName[t.Name] = t.Params
		}
	}
	for _, name := range readTools {
		schema, ok := byName[name]
		if !ok {
			continue
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(schema, &s)
		args := map[string]any{}
		switch {
		case name == "read_file":
			args["file_path"] = "README.md" // astrid's: relative to the workspace
		case name == "shell" || name == "exec_command":
			if _, ok := s.Properties["cmd"]; ok {
				args["cmd"] = "cat README.md"
			} else {
				args["command"] = []string{"cat", "README.md"}
			}
		case strings.Contains(name, "text_editor"):
			args["command"], args["path"] = "view", f.readme
		default:
			key := "file_path"
			for k := range s.Properties {
				if strings.Contains(strings.ToLower(k), "path") {
					key = k
				}
			}
			args[key] = f.readme
		}
		b, _ := json.Marshal(args)
		return name, string(b)
	}
	return "", ""
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	var req struct {
		Stream bool      `json:"stream"`
		Tools  []toolDef `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	text := string(body)
	done := strings.Contains(text, `"role":"tool"`) || strings.Contains(text, `"tool_result"`) || strings.Contains(text, `"function_call_output"`)
	tool, args := "", ""
	if !done {
		tool, args = f.pickCall(req.Tools)
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","owned_by":"bench"}]}`)
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		chat(w, req.Stream, tool, args)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		responses(w, tool, args)
	case strings.HasSuffix(r.URL.Path, "/messages"):
		messages(w, req.Stream, tool, args)
	default:
		http.NotFound(w, r)
	}
}

func sse(w io.Writer, event, data string) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
}

func chat(w http.ResponseWriter, stream bool, tool, args string) {
	argsJSON, _ := json.Marshal(args)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		msg := `{"role":"assistant","content":` + jsonString(answer) + `}`
		finish := "stop"
		if tool != "" {
			msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_b","type":"function","function":{"name":` + jsonString(tool) + `,"arguments":` + string(argsJSON) + `}}]}`
			finish = "tool_calls"
		}
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"fake-model","choices":[{"index":0,"message":`+msg+`,"finish_reason":"`+finish+`"}],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		sse(w, "", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[{"index":0,"delta":`+delta+`,"finish_reason":`+finish+`}]}`)
	}
	if tool != "" {
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":`+jsonString(tool)+`,"arguments":`+string(argsJSON)+`}}]}`, "null")
		chunk(`{}`, `"tool_calls"`)
	} else {
		chunk(`{"role":"assistant","content":"It holds "}`, "null")
		chunk(`{"content":"a README."}`, "null")
		chunk(`{}`, `"stop"`)
	}
	sse(w, "", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}`)
	sse(w, "", "[DONE]")
}

func responses(w http.ResponseWriter, tool, args string) {
	w.Header().Set("Content-Type", "text/event-stream")
	item := `{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":` + jsonString(answer) + `,"annotations":[]}]}`
	if tool != "" {
		item = `{"type":"function_call","id":"fc1","call_id":"call_b","name":` + jsonString(tool) + `,"arguments":` + jsonString(args) + `,"status":"completed"}`
	}
	sse(w, "response.created", `{"type":"response.created","response":{"id":"r1","object":"response","status":"in_progress","output":[]}}`)
	if tool == "" {
		sse(w, "response.output_text.delta", `{"type":"response.output_text.delta","item_id":"m1","output_index":0,"content_index":0,"delta":`+jsonString(answer)+`}`)
	}
	sse(w, "response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":`+item+`}`)
	sse(w, "response.completed", `{"type":"response.completed","response":{"id":"r1","object":"response","status":"completed","output":[`+item+`],"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":0},"output_tokens":10,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":110}}}`)
}

func messages(w http.ResponseWriter, stream bool, tool, args string) {
	content := `{"type":"text","text":` + jsonString(answer) + `}`
	stop := "end_turn"
	if tool != "" {
		content = `{"type":"tool_use","id":"toolu_b","name":` + jsonString(tool) + `,"input":` + args + `}`
		stop = "tool_use"
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"fake-model","content":[`+content+`],"stop_reason":"`+stop+`","usage":{"input_tokens":100,"output_tokens":10}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"fake-model","content":[],"stop_reason":null,"usage":{"input_tokens":100,"output_tokens":1}}}`)
	if tool != "" {
		sse(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_b","name":`+jsonString(tool)+`,"input":{}}}`)
		sse(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+jsonString(args)+`}}`)
	} else {
		sse(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		sse(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jsonString(answer)+`}}`)
	}
	sse(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
	sse(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":10}}`)
	sse(w, "message_stop", `{"type":"message_stop"}`)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// startFake serves a fakeModel on loopback and returns its base URL.
func startFake(readme string) (*httptest.Server, *fakeModel) {
	f := &fakeModel{readme: readme}
	return httptest.NewServer(f), f
}
