package store

// mcpTokensPrefix makes the name of the namespace holding a capsule's MCP
// OAuth state: no capsule id contains ':', so it never meets a capsule's
// own secrets, and the kernel, which hands a capsule its secrets as [env]
// values, never lists it.
const mcpTokensPrefix = "mcp-oauth:"

// MCPTokens is the sealed OAuth state (client registration and tokens) of
// capsule's remote MCP servers, written by `astrid mcp login` and by the
// MCP engine when it refreshes a token, one key per server id. It is kept
// apart from the capsule's secrets, which the capsule reads: a capsule
// never sees its servers' tokens. Purge forgets it with the rest.
func (s *Store) MCPTokens(capsule string) *Secrets {
	name := mcpTokensPrefix + capsule
	return &Secrets{
		ns:      newNamespace(s, "mcp tokens "+short(capsule), validateCapsule(capsule), string(bucketSecrets), name),
		capsule: name,
	}
}
