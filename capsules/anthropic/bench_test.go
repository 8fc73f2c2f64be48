package anthropic_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	sdkapi "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/astrid-go/astrid/capsules/anthropic"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// benchTokens is how many text deltas one benchmarked answer streams.
const benchTokens = 1000

// manyDeltas is a recorded-shape stream of benchTokens text deltas.
func manyDeltas(n int) []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_bench\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-5-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range n {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" tok%d\"}}\n\n", i)
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1000}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}

// BenchmarkStreamedToken compares, in one run, a 1000-delta answer read
// with anthropic-sdk-go directly (no bus) and the same answer through the
// provider capsule and the bus to a subscriber (sdktest's Generate, as an
// orchestrator hears it). ns/token is per delta; the ratio of the two is
// the provider's overhead (docs/rationale/providers.md).
func BenchmarkStreamedToken(b *testing.B) {
	body := manyDeltas(benchTokens)
	b.Run("sdk-direct", func(b *testing.B) {
		api := newFakeAPI(b, reply{body: body})
		client := sdkapi.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(api.srv.URL), option.WithAPIKey("k"),
			option.WithMaxRetries(0), option.WithoutOpenTelemetry(), option.WithOpenTelemetryPropagation(false))
		params := sdkapi.MessageNewParams{Model: anthropic.DefaultModel, MaxTokens: 8192, Messages: []sdkapi.MessageParam{sdkapi.NewUserMessage(sdkapi.NewTextBlock("Hello"))}}
		b.ResetTimer()
		for b.Loop() {
			s := client.Messages.NewStreaming(context.Background(), params)
			n := 0
			for s.Next() {
				if ev := s.Current(); ev.Type == "content_block_delta" && ev.Delta.Text != "" {
					n++
				}
			}
			if s.Err() != nil || n != benchTokens {
				b.Fatalf("%d deltas, %v", n, s.Err())
			}
			s.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchTokens), "ns/token")
	})
	b.Run("provider-over-bus", func(b *testing.B) {
		api := newFakeAPI(b, reply{body: body})
		k := sdktest.New(b, provider(api, nil))
		req := ipc.LLMRequest{RequestID: "bench", Messages: []ipc.Message{ipc.TextMessage(ipc.RoleUser, "Hello")}}
		b.ResetTimer()
		for b.Loop() {
			evs := k.Generate(anthropic.Provider, req)
			if len(evs) != benchTokens+3 || evs[len(evs)-1].Kind != ipc.StreamDone {
				b.Fatalf("%d events, last %+v", len(evs), evs[len(evs)-1])
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchTokens), "ns/token")
	})
}
