package manifest

// Capabilities is a capsule's [capabilities] table after component
// capabilities were merged into it. Everything defaults to deny; Kv is
// accepted and not enforced (every capsule has KV in its own namespace).
type Capabilities struct {
	Uplink               bool     `toml:"uplink" json:"uplink,omitempty"`
	Net                  []string `toml:"net" json:"net,omitempty"`
	NetBind              []string `toml:"net_bind" json:"net_bind,omitempty"`
	NetConnect           []string `toml:"net_connect" json:"net_connect,omitempty"`
	Kv                   []string `toml:"kv" json:"kv,omitempty"`
	FSRead               []string `toml:"fs_read" json:"fs_read,omitempty"`
	FSWrite              []string `toml:"fs_write" json:"fs_write,omitempty"`
	HostProcess          []string `toml:"host_process" json:"host_process,omitempty"`
	AllowPersistent      bool     `toml:"allow_persistent" json:"allow_persistent,omitempty"`
	Identity             []string `toml:"identity" json:"identity,omitempty"`
	AllowPromptInjection bool     `toml:"allow_prompt_injection" json:"allow_prompt_injection,omitempty"`
}
