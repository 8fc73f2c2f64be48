// Package modellist owns what an LLM provider capsule keeps of its server's
// model list (GET /models): the cached record and the key telling servers
// and credentials apart, the bounds on reading a list (time, bytes, count),
// and an HTTP transport that enforces the byte bound.
//
// It is a leaf helper for the provider capsules (capsules/openai,
// capsules/anthropic): it imports nothing of ours, does no I/O of its own
// and knows no provider's API. Which ids a provider keeps, how it asks its
// server and where it stores the record are the capsule's.
package modellist
