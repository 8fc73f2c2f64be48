package manifest

import "encoding/json"

// Manifest is a parsed and validated Capsule.toml. A Manifest returned
// together with error diagnostics is a best-effort reading for reports: a
// capsule must not be run unless Diagnostics.Err is nil.
type Manifest struct {
	Dir  string `json:"dir,omitempty"` // the capsule directory; "" for embedded manifests
	File string `json:"file"`          // the manifest's file name, as diagnostics cite it

	Package    Package     `json:"package"`
	Components []Component `json:"components,omitempty"`
	Imports    []Import    `json:"imports,omitempty"`
	Exports    []Export    `json:"exports,omitempty"`
	// Publish and Subscribe keep manifest order; their patterns are the ACL.
	Publish   []TopicEntry `json:"publish,omitempty"`
	Subscribe []TopicEntry `json:"subscribe,omitempty"`
	// Capabilities are [capabilities] with every component's capabilities
	// merged in: lists united without duplicates, flags OR-ed.
	Capabilities Capabilities  `json:"capabilities"`
	Env          []EnvVar      `json:"env,omitempty"`
	Commands     []Command     `json:"commands,omitempty"`
	MCPServers   []MCPServer   `json:"mcp_servers,omitempty"`
	Skills       []Skill       `json:"skills,omitempty"`
	Uplinks      []Uplink      `json:"uplinks,omitempty"`
	ContextFiles []ContextFile `json:"context_files,omitempty"`
	Tools        []Tool        `json:"tools,omitempty"`
}

// Package is [package].
type Package struct {
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	AstridVersion string   `json:"astrid_version,omitempty"` // a Cargo-style requirement on RuntimeVersion
	Description   string   `json:"description,omitempty"`
	Authors       []string `json:"authors,omitempty"`
	License       string   `json:"license,omitempty"`
	LicenseFile   string   `json:"license_file,omitempty"`
	Readme        string   `json:"readme,omitempty"`
	Homepage      string   `json:"homepage,omitempty"`
	Repository    string   `json:"repository,omitempty"`
	Documentation string   `json:"documentation,omitempty"`
	Keywords      []string `json:"keywords,omitempty"`
	Categories    []string `json:"categories,omitempty"`
	// Publish is package.publish (registry publication); nil means true.
	Publish  *bool           `json:"publish,omitempty"`
	Include  []string        `json:"include,omitempty"`
	Exclude  []string        `json:"exclude,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// Component types.
const (
	ComponentExecutable = "executable"
	ComponentLibrary    = "library"
)

// Component is one [[component]].
type Component struct {
	ID   string `json:"id,omitempty"`
	File string `json:"file"` // as written, relative to the capsule directory
	// Path is File joined to the capsule directory; "" for embedded manifests.
	Path string   `json:"path,omitempty"`
	Type string   `json:"type"` // ComponentExecutable or ComponentLibrary
	Link []string `json:"link,omitempty"`
	// Hash is "sha256:<hex>" or ""; Load verifies it when the file exists.
	Hash         string       `json:"hash,omitempty"`
	Capabilities Capabilities `json:"capabilities"`
}

// Import is one interface the capsule needs, from [imports].
type Import struct {
	Name        string `json:"name"` // "namespace:interface"
	Requirement string `json:"requirement"`
	Optional    bool   `json:"optional,omitempty"`
}

// Export is one interface the capsule provides, from [exports].
type Export struct {
	Name    string `json:"name"` // "namespace:interface"
	Version string `json:"version"`
}

// DefaultPriority is an interceptor's priority when its entry sets none;
// lower runs first.
const DefaultPriority uint32 = 100

// WITOpaque is the wit value of entries whose payload is not type-checked.
const WITOpaque = "opaque"

// TopicEntry is one [publish] or [subscribe] entry. Its Pattern is an ACL key.
type TopicEntry struct {
	Pattern string `json:"pattern"`
	WIT     string `json:"wit"`
	// At most one source pin is set.
	Version string `json:"version,omitempty"`
	Tag     string `json:"tag,omitempty"`
	Rev     string `json:"rev,omitempty"`
	Branch  string `json:"branch,omitempty"`
	Path    string `json:"path,omitempty"`
	// Handler makes a [subscribe] entry an interceptor binding.
	Handler  string `json:"handler,omitempty"`
	Priority uint32 `json:"priority,omitempty"` // DefaultPriority when Handler is set and none was given
	Fanout   bool   `json:"fanout,omitempty"`   // [publish] only: a documentation hint
}

// Interceptor is a [subscribe] entry with a handler.
type Interceptor struct {
	Pattern  string `json:"pattern"`
	Handler  string `json:"handler"`
	Priority uint32 `json:"priority"`
}

// Env types.
const (
	EnvSecret = "secret"
	EnvText   = "text"
	EnvSelect = "select"
	EnvArray  = "array"
)

// EnvVar is one [env] entry.
type EnvVar struct {
	Key         string `json:"key"`
	Type        string `json:"type"` // one of the Env* constants ("string" is read as text)
	Request     string `json:"request,omitempty"`
	Description string `json:"description,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	// Default is the default as text: strings verbatim, other values as JSON.
	Default     *string      `json:"default,omitempty"`
	EnumValues  []string     `json:"enum_values,omitempty"`
	OptionsFrom *OptionsFrom `json:"options_from,omitempty"`
}

// OptionsFrom is a select's dynamic choices, fetched by the installer.
type OptionsFrom struct {
	HTTP   string   `json:"http"`
	Bearer string   `json:"bearer,omitempty"`
	Select string   `json:"select"` // default "data[].id"
	After  []string `json:"after,omitempty"`
}

// Command kinds.
const (
	CommandSlash = "slash"
	CommandCLI   = "cli"
)

// Command is one [[command]].
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	File        string `json:"file,omitempty"`
	Kind        string `json:"kind"` // CommandSlash (default) or CommandCLI
}

// MCPServer is one [[mcp_server]]; Type "stdio" (a process) and the
// remote "http" and "sse" get an engine (Runs).
type MCPServer struct {
	ID          string   `json:"id"`
	Type        string   `json:"type,omitempty"`
	Command     string   `json:"command,omitempty"`
	Args        []string `json:"args,omitempty"`
	Description string   `json:"description,omitempty"`
	// URL is a remote server's endpoint (http, sse).
	URL string `json:"url,omitempty"`
	// Headers are sent with every request to a remote server; values may
	// name the capsule's [env] values as ${secret:KEY} or ${env:KEY}
	// (ParseTemplate), filled in when the engine connects.
	Headers map[string]string `json:"headers,omitempty"`
	// OAuthClientID and OAuthClientSecret name a client registered with
	// the server's authorization server beforehand (templates as Headers;
	// the secret only as ${secret:KEY}). Without them `astrid mcp login`
	// registers a client dynamically.
	OAuthClientID     string `json:"oauth_client_id,omitempty"`
	OAuthClientSecret string `json:"oauth_client_secret,omitempty"`
	// OAuthGrant is MCPGrantAuthorizationCode (the default: a person logs
	// in) or MCPGrantClientCredentials (machine to machine: the engine
	// gets its own tokens with the client's credentials, no login).
	OAuthGrant string `json:"oauth_grant,omitempty"`
	// OAuthClientKey names (as ${secret:KEY}) a PEM private key the
	// client_credentials grant signs its client assertion with
	// (private_key_jwt, RFC 7523), instead of sending a secret.
	OAuthClientKey string `json:"oauth_client_key,omitempty"`
	// OAuthClientMetadataURL is the https URL of a Client ID Metadata
	// Document the capsule's publisher hosts: the login uses it as its
	// client id when the authorization server supports such documents,
	// instead of registering a client.
	OAuthClientMetadataURL string `json:"oauth_client_metadata_url,omitempty"`
	// IdP names the enterprise identity provider of MCPGrantEnterprise:
	// its issuer, the client registered there, and the person's ID token
	// from it (a capsule secret).
	IdPIssuer       string `json:"idp_issuer,omitempty"`
	IdPClientID     string `json:"idp_client_id,omitempty"`
	IdPClientSecret string `json:"idp_client_secret,omitempty"`
	IdPIDToken      string `json:"idp_id_token,omitempty"`
}

// The grants an [[mcp_server]]'s oauth_grant names.
const (
	MCPGrantAuthorizationCode = "authorization_code"
	MCPGrantClientCredentials = "client_credentials"
	// MCPGrantEnterprise is enterprise-managed authorization (SEP-990):
	// the person's ID token from the enterprise IdP is exchanged there
	// (RFC 8693) for an identity assertion grant, which the server's
	// authorization server takes for a token (RFC 7523).
	MCPGrantEnterprise = "enterprise"
)

// Skill is one [[skill]], served by the static engine.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	File        string `json:"file"`
}

// Uplink is one [[uplink]].
type Uplink struct {
	Name     string `json:"name"`
	Platform string `json:"platform"`
	Profile  string `json:"profile"` // chat, interactive, notify or bridge
}

// ContextFile is one [[context_file]], served by the static engine.
type ContextFile struct {
	Name string `json:"name"`
	File string `json:"file"`
}

// Tool is one [[tool]].
type Tool struct {
	Name              string `json:"name"`
	DescriptionForLLM string `json:"description_for_llm"`
	InputSchemaWIT    string `json:"input_schema_wit,omitempty"`
	Mutable           bool   `json:"mutable,omitempty"`
	// AsksApproval says the tool asks the person itself, per call,
	// through the host approval call, so an approval layer need not ask
	// for the tool as a whole. It needs Mutable.
	AsksApproval bool `json:"asks_approval,omitempty"`
}
