package uplinkwire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Version is the protocol version this build speaks; a hello naming
// another is refused with CodeVersion.
const Version = 1

// MaxFrame caps one frame's JSON body, both ways.
const MaxFrame = 1 << 20

// The ops. A client sends OpHello first, then requests; every request
// carries an ID its answer (OpOK, OpError) echoes. The server sends OpEvent
// frames for the client's subscriptions whenever they come.
const (
	OpHello        = "hello"        // client: Version, Client
	OpWelcome      = "welcome"      // server: Version, Principal
	OpPublish      = "publish"      // client: ID, Topic, Payload
	OpSubscribe    = "subscribe"    // client: ID, Pattern, Match → OK with Sub
	OpUnsubscribe  = "unsubscribe"  // client: ID, Sub
	OpInterceptors = "interceptors" // client: ID, Topic → OK with IDs
	OpHoldsGrant   = "holds_grant"  // client: ID, Capsule, Grant → OK with Held
	OpQuery        = "query"        // client: ID, Query, Args → OK with Payload (query.go)
	OpWorkspace    = "workspace"    // client: ID, Workspace → OK with Workspace: the connection's later requests work there
	OpLoad         = "load"         // client: ID, Capsule → OK with Payload: the capsule's status once (re)loaded (the owner only)
	OpAttachMCP    = "attach_mcp"   // client: ID, Payload (a session's MCP servers) → OK with IDs: their tools, served in the connection's workspace scope only until it closes (the owner only)
	OpOK           = "ok"           // server: ID, and Sub, IDs, Held or Payload
	OpEvent        = "event"        // server: Sub, Topic, Payload, Source, Principal, Host, Lost, ToolMiddleware
	OpError        = "error"        // server: ID (0 when about no request), Code, Error
)

// Error codes.
const (
	CodeVersion        = "version"          // hello's version is not Version
	CodeHandshake      = "handshake"        // the first frame was not a hello
	CodeWorkspace      = "workspace"        // the hello's workspace is refused (missing, not a directory, in $ASTRID_HOME, not the peer's)
	CodeSettings       = "settings"         // the hello's env is refused (an unknown variable, a control character, too long)
	CodeRefused        = "refused"          // the peer's uid maps to no principal
	CodePrincipal      = "principal"        // the hello asked for a principal the peer's uid may not act as
	CodeTooManyClients = "too_many_clients" // the server is at its client limit
	CodeEvicted        = "evicted"          // at the client limit, this idle connection gave its slot to a new client: it is closed
	CodeBadFrame       = "bad_frame"        // the frame is not a JSON object of a known op
	CodeTooLarge       = "too_large"        // a frame over MaxFrame: the connection closes
	CodeNotAllowed     = "not_allowed"      // the topic or pattern is not in the allowlist
	CodeSlow           = "slow"             // the client's queue filled: it is disconnected
	CodeLimit          = "limit"            // too many subscriptions
	CodeNotFound       = "not_found"        // no such subscription
	CodeUnknownQuery   = "unknown_query"    // a query this daemon does not answer
	CodeFailed         = "failed"           // the kernel refused (Error says why)
	CodeBusy           = "busy"             // not admitted now (CPU budget, publish rate): nothing was published; try again
)

// Frame is every frame's shape; an op uses the fields its comment names.
type Frame struct {
	Op      string `json:"op"`
	ID      uint64 `json:"id,omitempty"`
	Version int    `json:"version,omitempty"`
	Client  string `json:"client,omitempty"`
	// Principal, on a welcome, is who the connection acts as; on a
	// hello, the principal the client asks to act as (empty: its uid's
	// default), which the daemon allows only among its uid's.
	Principal string          `json:"principal,omitempty"`
	Topic     string          `json:"topic,omitempty"`
	Pattern   string          `json:"pattern,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	Sub       uint64          `json:"sub,omitempty"`
	Source    string          `json:"source,omitempty"`
	// Host, on an event, is the host of a bus spanning hosts the
	// envelope was published on, when that is not the daemon's own
	// (ipc.Envelope.Host).
	Host    string   `json:"host,omitempty"`
	Lost    uint64   `json:"lost,omitempty"`
	Capsule string   `json:"capsule,omitempty"`
	Grant   string   `json:"grant,omitempty"`
	IDs     []string `json:"ids,omitempty"`
	Held    bool     `json:"held,omitempty"`
	Query   string   `json:"query,omitempty"`
	Code    string   `json:"code,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Match, on a subscribe, relays only the events whose payload is an
	// object with each of these top-level string members equal to its
	// value (CheckMatch bounds it).
	Match map[string]string `json:"match,omitempty"`
	// ToolMiddleware, on an event, is whether its source held the
	// tool_middleware grant when the daemon relayed it; nil when the
	// daemon did not say.
	ToolMiddleware *bool `json:"tool_middleware,omitempty"`
	// Workspace, on a hello or a workspace request, is the directory the
	// connection's requests work on (absolute; DESIGN §4a); on a welcome
	// or its answer, the one the daemon took.
	Workspace string `json:"workspace,omitempty"`
	// Env, on a hello, is the client's provider settings (ProviderEnv's
	// variables that are set), applied to its requests only.
	Env map[string]string `json:"env,omitempty"`
	// Args, on a query that takes them (QueryRevokeApprovals), is its
	// arguments: a JSON object.
	Args json.RawMessage `json:"args,omitempty"`
	// ReplyTo, CorrelationID and TimeoutMS, on a publish, make it a
	// request (DESIGN §4b): its answer, or the kernel's failure
	// ({"type":"request_failed","correlation_id",…}), comes on ReplyTo.
	ReplyTo       string `json:"reply_to,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
	TimeoutMS     int64  `json:"timeout_ms,omitempty"`
}

// Decode parses one frame body. A body that is not a JSON object with an
// op is an error.
func Decode(body []byte) (Frame, error) {
	var f Frame
	if err := json.Unmarshal(body, &f); err != nil {
		return Frame{}, fmt.Errorf("not a JSON frame: %w", err)
	}
	if f.Op == "" {
		return Frame{}, errors.New("the frame has no op")
	}
	return f, nil
}

// Encode renders f as a frame body.
func Encode(f Frame) ([]byte, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("uplinkwire: encode %s: %w", f.Op, err)
	}
	if len(b) > MaxFrame {
		return nil, fmt.Errorf("uplinkwire: a %s frame of %d bytes is over the %d-byte limit", f.Op, len(b), MaxFrame)
	}
	return b, nil
}

// Errorf is an error frame about request id.
func Errorf(id uint64, code, format string, args ...any) Frame {
	return Frame{Op: OpError, ID: id, Code: code, Error: fmt.Sprintf(format, args...)}
}

// Bounds of a subscription's match: a few correlation ids, not a query.
const (
	MaxMatch      = 4
	MaxMatchName  = 64
	MaxMatchValue = 256
)

// CheckMatch refuses a match over the bounds or with an empty name.
func CheckMatch(match map[string]string) error {
	if len(match) > MaxMatch {
		return fmt.Errorf("a match names at most %d members (got %d)", MaxMatch, len(match))
	}
	for name, value := range match {
		if name == "" || len(name) > MaxMatchName {
			return fmt.Errorf("a match member's name is 1 to %d bytes (got %d)", MaxMatchName, len(name))
		}
		if len(value) > MaxMatchValue {
			return fmt.Errorf("match member %q: a value is at most %d bytes (got %d)", name, MaxMatchValue, len(value))
		}
	}
	return nil
}
