// Package telemetry owns the kernel's OpenTelemetry tracing: one trace per
// agent turn, with spans for the turn, each tool call, each provider
// request, each approval wait and each capsule invocation
// (docs/observability.md names them and their attributes).
//
// A Tracer is a dispatch.Observer. It learns of a turn only from the bus, as
// a frontend would: a user.v1.prompt starts the turn's trace, the envelopes
// published because of it carry the trace context (ipc.Envelope.Trace, set
// by the dispatcher from the publishing call's context), and request/answer
// pairs on the bus (tool.v1.request.execute → tool.v1.execute.result,
// llm.v1.request.generate.* → the stream's Done or Error, astrid.v1.approval
// → its response, user.v1.prompt → the final agent.v1.response) open and
// close the spans between them. Nothing in a capsule or in the agent loop
// knows tracing exists.
//
// It must not: make a span for an envelope that carries no trace context
// (kernel ticks, describes: only turns are traced), block or publish from an
// observer callback, keep more than a bounded number of spans open (an
// unanswered request's span is ended as abandoned), or cost anything when
// tracing is off (New returns nil and the kernel adds no observer).
package telemetry
