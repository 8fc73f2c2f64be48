package react_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/ipc"
)

const usageScript = `{"match": {"tool_results": ["r1"]}}
{"TextDelta": "The notes say hi."}
{"Usage": {"input_tokens": 1500, "output_tokens": 20, "cached_tokens": 1000}}
"Done"
{"match": {"user": "read"}}
{"ToolCallStart": {"id": "r1", "name": "read_file"}}
{"ToolCallDelta": {"id": "r1", "args_delta": "{\"file_path\":\"notes.txt\"}"}}
{"ToolCallEnd": {"id": "r1"}}
{"Usage": {"input_tokens": 1000, "output_tokens": 30}}
"Done"
{"match": {"user": "hello"}}
{"TextDelta": "Hi"}
"Done"
`

// A turn's final response sums the Usage of its model requests (here a
// tool round and the answer) and prices it from [env] prices for the
// model the turn asked for; a model without a price gets tokens only, and
// a turn whose provider reported nothing carries no usage.
func TestUsageAndCostOfATurn(t *testing.T) {
	k := boot(t, setup{script: usageScript, react: map[string]string{"prices": "replay:replay=2/8/0.5; nonsense, replay:x=1/2/3/4"}})
	writeFile(t, k, "notes.txt", "hi")
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "read my notes", ipc.PromptContext{Provider: "replay", Model: "replay"})
	wantFinal(t, r, ipc.OutcomeAnswer, "The notes say hi.")
	// 1500 uncached input at $2, 1000 cached at $0.50, 50 output at $8.
	const want = (1500*2 + 1000*0.5 + 50*8) / 1e6
	if u := r.Final.Usage; u == nil || *u != (ipc.Usage{InputTokens: 2500, OutputTokens: 50, CachedTokens: 1000}) ||
		r.Final.CostUSD == nil || math.Abs(*r.Final.CostUSD-want) > 1e-12 || r.Final.Model != "replay" {
		t.Fatalf("final %+v, usage %+v", r.Final, r.Final.Usage)
	}

	// The session store holds the same totals: the tool round's tokens
	// came with its append, the answer's with the answer's.
	body := k.SessionAsk(ipc.DefaultPrincipal, session.GetMetaTopic, map[string]string{"session_id": "s1", "correlation_id": "meta1"}, session.ReplyTopic(session.OpGetMeta, "meta1"))
	var meta session.MetaReply
	if err := json.Unmarshal(body, &meta); err != nil || meta.Session == nil || meta.Session.Usage == nil ||
		*meta.Session.Usage != *r.Final.Usage || math.Abs(meta.Session.CostUSD-want) > 1e-12 || meta.Session.Unpriced {
		t.Fatalf("session totals: %s", body)
	}

	r = k.RunPrompt(ipc.DefaultPrincipal, "s2", "read my notes", ipc.PromptContext{Provider: "replay", Model: "unpriced"})
	if r.Final.Usage == nil || r.Final.Usage.InputTokens != 2500 || r.Final.CostUSD != nil {
		t.Fatalf("an unpriced model: %+v", r.Final)
	}
	r = k.RunPrompt(ipc.DefaultPrincipal, "s3", "hello", ipc.PromptContext{Provider: "replay", Model: "replay"})
	if r.Final.Usage != nil || r.Final.CostUSD != nil {
		t.Fatalf("no usage reported: %+v", r.Final)
	}
}
