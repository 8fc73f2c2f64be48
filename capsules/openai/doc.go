// Package openai is the built-in OpenAI-compatible LLM provider
// (astrid-capsule-openai, provider "openai"; spec/capsules-cli.md §6.1,
// §6.2): it answers each llm_request on llm.v1.request.generate.openai by
// streaming a Chat Completion from the configured base URL (OpenAI, Ollama's
// /v1, vLLM, llama.cpp server, Groq, …) with the official openai-go SDK, and
// publishes every piece at once on llm.v1.stream.openai as an
// llm_stream_event carrying the request's request_id. The last event of a
// request is always Done or Error. It answers llm.v1.request.describe with
// one ProviderEntry per model it offers (the configured one, then the
// server's GET /v1/models list, read only for a describe asking to refresh,
// bounded and cached in KV; a list that cannot be read leaves a note),
// saying whether it is ready and, if not, the command that makes it so.
//
// It owns the translation between the bus's LLM types and the Chat
// Completions wire: messages and tools out; text, reasoning, tool calls
// (assembled by index into one id per call), usage and the end of the stream
// back. It also owns telling a finished stream from a broken one: an end
// without [DONE] or a finish_reason, a non-2xx answer, an error event, an
// invalid chunk, an over-long line and a stalled connection each become one
// Error with a readable message.
//
// It must not reach the network except through the host's client
// (sdk.Call.HTTPClient, under its `net` grant and the SSRF guard), must not
// retry by itself beyond one bounded wait on a 429 before any output, and
// keeps no state between requests but that cached list. It runs natively
// only (the SDK is too large for wasm and cannot dial from it); its own code
// starts no goroutine and uses no channel; the timers it arms are the
// stall watchdog of transport.go and the model list's deadline, through
// the context package.
package openai
