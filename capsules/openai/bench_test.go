package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/astrid-go/astrid/capsules/openai"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// benchTokens is how many content deltas the benchmark's stream carries.
const benchTokens = 1000

// tokenStream is a Chat Completions stream of n one-word content deltas,
// a finish, a usage chunk and [DONE], as OpenAI sends it.
func tokenStream(n int) []byte {
	var b strings.Builder
	chunk := func(delta, finish string) {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764590000,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6f2eabb9a5","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null,"obfuscation":"x1"}`+"\n\n", delta, finish)
	}
	chunk(`{"role":"assistant","content":"","refusal":null}`, "null")
	for i := range n {
		chunk(fmt.Sprintf(`{"content":" tok%d"}`, i), "null")
	}
	chunk(`{}`, `"stop"`)
	b.WriteString(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764590000,"model":"gpt-4.1-mini-2025-04-14","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1000,"total_tokens":1010}}` + "\n\ndata: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkStreamedTokens is the provider's own overhead per streamed
// token: one local server sends a stream of 1000 deltas; "bus" is the
// provider answering an llm_request with a frontend consuming
// llm.v1.stream.openai (every event decoded), "sdk" is openai-go reading
// the same stream directly, taking turns call by call in the same run.
// ratio-mean is bus over sdk; bus-ns-per-token and sdk-ns-per-token the
// per-token figures.
func BenchmarkStreamedTokens(b *testing.B) {
	srv := newWireServer(b, reply{body: tokenStream(benchTokens), piece: 64 << 10})
	k := bootAt(b, srv)
	svc := oai.NewChatCompletionService(option.WithBaseURL(srv.URL+"/v1"), option.WithHTTPClient(&http.Client{}), option.WithMaxRetries(0))
	params := oai.ChatCompletionNewParams{Model: "test-model", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("go")},
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}}
	n := 0
	bus := func() error {
		n++
		events := k.Generate(openai.Provider, ask(fmt.Sprintf("bench-%d", n), "go"))
		if len(events) != benchTokens+2 || events[len(events)-1].Kind != ipc.StreamDone {
			return fmt.Errorf("%d events, ending %+v", len(events), events[len(events)-1])
		}
		return nil
	}
	direct := func() error {
		stream := svc.NewStreaming(context.Background(), params)
		deltas := 0
		for stream.Next() {
			if ch := stream.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				deltas++
			}
		}
		if err := stream.Err(); err != nil || deltas != benchTokens {
			return fmt.Errorf("%d deltas, %v", deltas, err)
		}
		return nil
	}
	testutil.Interleave(b, 3, "bus", "sdk", bus, direct)
}
