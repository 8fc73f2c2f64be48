// Package anthropic is the built-in Anthropic LLM provider
// (astrid-capsule-anthropic, provider "anthropic"; spec/capsules-cli.md §6.1
// and §6.4): it answers each llm_request on
// llm.v1.request.generate.anthropic with one streamed call of the Messages
// API, made with github.com/anthropics/anthropic-sdk-go/v2 (API version
// 2026-10-21), and publishes every event of that stream at once, as it
// arrives, on llm.v1.stream.anthropic under the request's request_id. The
// last event is always Done or Error: a stream that ends without
// message_stop, an HTTP error, an `error` event, invalid JSON, a line over 1
// MiB and a connection silent for stream_timeout_secs each end in one Error
// with a readable message. It answers llm.v1.request.describe with one
// ProviderEntry per model it offers, saying whether it is ready to be used:
// the configured model, then the API's own list (GET /v1/models, read only
// for a describe asking to refresh, bounded and cached in KV; until then, or
// when it cannot be read, KnownModels and a note saying why).
//
// It owns the mapping between the bus's provider-neutral LLM types and the
// Messages API: the system prompt as `system`, tool calls as tool_use
// blocks, every tool result of a round in one user message, images as base64
// image blocks, tools with their input_schema.
//
// It is native only (the SDK cannot run in wasm): its HTTP goes through the
// call's egress client (sdk.Call.HTTPClient), under its `net` grant and the
// operator's base_url, and every request carries the call's context. It
// keeps no state between requests but that cached list, starts no goroutines
// and sleeps only in a bounded Recv (one retry of a 429 or 529 before any
// output).
package anthropic
