package hostapi

import "time"

// Host is the syscall table as seen by one call of one capsule. Every method
// knows the capsule and the invoking principal it was bound to, and honours
// the call's deadline and cancellation. Implementations are safe for use by
// the one goroutine running the call; handlers are synchronous.
type Host interface {
	IPC
	KV
	FS
	HTTP
	Sys
	Calls
	Approval
	Capabilities
	Agents
	Process
	Net
	Identity
	Elicit
	Audit
}

// IPC is the capsule's access to the bus. The manifest's [publish] and
// [subscribe] keys are enforced on every call.
type IPC interface {
	// Publish puts payload (JSON) on topic; the kernel stamps source and
	// principal. It never blocks.
	Publish(topic string, payload []byte) error
	// Subscribe opens a subscription; one made inside a handler is scoped
	// to the invoking principal and ends with the call.
	Subscribe(pattern string) (SubscriptionID, error)
	// Recv waits up to timeout (capped by MaxRecvTimeout and the call's
	// deadline) for the next message; CodeTimeout when none came.
	Recv(sub SubscriptionID, timeout time.Duration) (Message, error)
	// Poll returns the next message without waiting; ok is false when none.
	Poll(sub SubscriptionID) (msg Message, ok bool, err error)
	Unsubscribe(sub SubscriptionID) error
	// PublishRequest publishes payload on topic as a request (DESIGN §4b):
	// its answer comes on req.ReplyTo (which the capsule must be allowed
	// to subscribe to) carrying req.CorrelationID. If no handler answers
	// it — none takes it, a queue is full, the handler fails or refuses
	// it, req.Timeout passes — the kernel answers there itself with an
	// ipc.RequestFailed payload (ipc.AsRequestFailed), exactly once.
	PublishRequest(topic string, payload []byte, req Request) error
	// PublishReply publishes payload on topic as an answer to the request
	// correlationID names (an Invocation's ReplyTo and CorrelationID, or
	// ones the capsule kept); the first answer ends the request's wait.
	PublishReply(topic, correlationID string, payload []byte) error
	// Serving names the request this call serves: its reply address and
	// correlation id, both empty when the invoking event is no request.
	Serving() (replyTo, correlationID string)
	// Interceptors answers "who intercepts topic T": the ids of the capsules
	// whose interceptor patterns match, in dispatch order. On a bus across
	// hosts (DESIGN §9), the other hosts' capsules whose interceptor is
	// exactly topic follow this host's (who takes tool calls on
	// tool.v1.request.execute, say).
	Interceptors(topic string) ([]string, error)
	// ExactInterceptors answers "who intercepts exactly topic T": of
	// Interceptors' answer, only the capsules with an interceptor whose
	// pattern is topic itself; a wildcard interceptor is middleware. For a
	// tool's topic, tool.v1.execute.<name>, these are the tool's providers
	// (DESIGN §4c).
	ExactInterceptors(topic string) ([]string, error)
}

// KV is the capsule's key-value store in its own per-principal namespace.
//
// A key is 1 byte to 1 KiB of UTF-8 without NUL; a value is at most 1 MiB.
// A write returns once it is on disk (it survives kill -9 and a power cut),
// except for volatile keys: a key whose first byte is '~' (say
// "~pending/42") is held in this kernel process's memory only (another
// astrid process on the same home does not see it), in the same namespace
// and under the same rules, never written to disk, and lost when the kernel
// stops. Writing one costs no disk commit, which suits bookkeeping that a
// restart makes meaningless anyway (calls in flight, caches). Each
// (principal, capsule) holds at most 4096 volatile keys and 4 MiB of them
// (keys plus values); a KVSet past that evicts the least recently written
// volatile keys of the namespace (logged) instead of failing, so a capsule
// must treat a volatile key as possibly gone. KVList and KVClear cover both
// kinds: a prefix starting with '~' only volatile keys, an empty prefix
// every key (sorted by bytes), any other prefix only durable keys.
type KV interface {
	KVGet(key string) (value []byte, ok bool, err error)
	KVSet(key string, value []byte) error
	KVDelete(key string) error
	KVList(prefix string) ([]string, error)
	KVClear(prefix string) (int, error)
}

// FS is file access, checked against fs_read / fs_write. Paths are absolute,
// relative to the workspace, or scheme-form (home://, cwd://).
type FS interface {
	FSRead(path string) ([]byte, error)
	FSWrite(path string, data []byte) error
	FSStat(path string) (FileInfo, error)
	FSList(path string) ([]DirEntry, error)
	FSMkdir(path string) error
	FSRemove(path string) error
	FSRename(from, to string) error
	// FSResolve checks path as FSWrite (write) or FSRead (otherwise)
	// checks it, changing nothing, and returns where the existing file or
	// directory it names lies: absolute, every symlink resolved. A
	// capsule names a checked file to someone outside the grants that way
	// (an editor's buffer, ipc.EditorBufferRequest). CodeNotFound when
	// nothing is there.
	FSResolve(path string, write bool) (string, error)
}

// HTTP is outgoing HTTP through the SSRF-safe egress client, checked
// against `net` on every hop.
type HTTP interface {
	HTTPDo(req HTTPRequest) (HTTPResponse, error)
}

// Sys is the capsule's view of itself and its caller.
type Sys interface {
	CapsuleID() string
	// Principal is the invoking principal ("default" for system events).
	Principal() string
	// Config returns the capsule's operator-set [env] value for key.
	Config(key string) (value string, ok bool)
	Log(level LogLevel, msg string)
	Now() time.Time
	// HoldsGrant reports whether the loaded capsule capsuleID holds grant,
	// one of the boolean [capabilities] grants that decide whether what
	// that capsule publishes may be trusted (GrantPromptInjection,
	// GrantToolMiddleware): a consumer checks the source_id the kernel
	// stamped on a message. A capsule that is not loaded holds none
	// (false, no error); any other grant name is CodeInvalid, so a
	// capsule learns nothing else about another's manifest.
	HoldsGrant(capsuleID, grant string) (bool, error)
}

// The grants HoldsGrant answers about.
const (
	// GrantPromptInjection is [capabilities] allow_prompt_injection: the
	// prompt builder lets the capsule's hook contributions change the
	// system prompt (seed 003).
	GrantPromptInjection = "allow_prompt_injection"
	// GrantToolMiddleware is [capabilities] tool_middleware (DESIGN §4c):
	// a frontend takes a consolidated tool result only from its holder.
	GrantToolMiddleware = "tool_middleware"
)

// Calls registers per-call safety nets with the kernel.
type Calls interface {
	// SetFailureReply registers a message the engine publishes on the
	// capsule's behalf if this call traps, times out or is dropped, so a
	// waiting requester always gets an answer. The topic is ACL-checked now.
	SetFailureReply(topic string, payload []byte) error
	// SetCancelKey names this call (a tool call id) so that a cancel request
	// naming the key interrupts it.
	SetCancelKey(key string) error
}

// Approval asks the person before the capsule does something.
type Approval interface {
	// RequestApproval asks the invoking principal's person, through a
	// frontend, whether this capsule may do action on resource (say
	// "run_shell_command" on the exact command line), and waits for the
	// answer. approved is true for approve, approve_session and
	// approve_always; the latter two also keep an allowance for exactly
	// this capsule, action and resource (for the life of the kernel, or on
	// disk), which answers the same question at once from then on. false
	// is a denial. No answer within the host's approval window is
	// CodeTimeout; the call's cancellation is CodeCancelled. action is 1 to
	// 256 bytes (control characters are removed); resource is trimmed, and
	// shown escaped and cut past 1024 bytes (ipc.ApprovalText), while an
	// allowance keeps it whole.
	RequestApproval(action, resource string) (approved bool, err error)
}

// Process runs programs on the host, checked against host_process.
type Process interface {
	// ProcessRun runs req.Program (named exactly as in host_process) in
	// its own process group and waits for it. It ends, with its whole
	// group and anything that escaped from it, when req.Timeout passes,
	// when the call's deadline passes or when the call is cancelled
	// (SIGINT, then SIGKILL after a grace): the result then says so
	// (TimedOut, Cancelled) and the error is CodeTimeout or
	// CodeCancelled. A program that ran and exited non-zero is no error.
	ProcessRun(req ProcessRequest) (ProcessResult, error)
	// ProcessSpawn starts req.Program in the background, checked as
	// ProcessRun's request is, and returns at once with its handle. It
	// belongs to this capsule and the invoking principal: only they can
	// read or kill it (anyone else's id is CodeNotFound). A capsule holds
	// at most MaxBackgroundProcesses (CodeRateLimited past that) until it
	// collects them (a ProcessLogs that reports the exit, or ProcessKill).
	// It ends with its capsule instance (an unload, a reload, the kernel's
	// stop); req.Persistent asks that it outlive a reload of the capsule,
	// which needs allow_persistent (else CodeDenied naming the grant).
	ProcessSpawn(req ProcessSpawnRequest) (ProcessHandle, error)
	// ProcessLogs returns what the background process id wrote since the
	// previous read and whether it still runs; once it reports the exit
	// the id is collected and is CodeNotFound from then on.
	ProcessLogs(id string) (ProcessLogs, error)
	// ProcessKill ends the background process id (SIGINT to its group,
	// SIGKILL to all of it and what escaped after ProcessGrace), waits
	// for it and returns its last output and how it ended; the id is
	// collected.
	ProcessKill(id string) (ProcessLogs, error)
}

// ProcessRequest is one program run.
type ProcessRequest struct {
	// Program is compared verbatim with host_process, then looked up on
	// the kernel's fixed PATH (ProcessPath) when it has no slash.
	Program string   `json:"program"`
	Args    []string `json:"args,omitempty"`
	// Env is added to a clean environment (PATH=ProcessPath, HOME and
	// LANG=C.UTF-8); keys that change how programs are loaded or how
	// shells start (LD_*, DYLD_*, BASH_ENV, ...) are refused.
	Env map[string]string `json:"env,omitempty"`
	// Dir is the working directory, checked like an FSRead path (""
	// is the workspace); a symlink out of the grant is refused.
	Dir string `json:"dir,omitempty"`
	// Stdin is written to the program's standard input (at most
	// MaxProcessStdin bytes); without it the input is empty.
	Stdin []byte `json:"stdin,omitempty"`
	// Timeout bounds the run (0: the call's deadline alone), capped by
	// the call's deadline.
	Timeout time.Duration `json:"timeout_ns,omitempty"`
	// Unconfined asks to run the program outside the sandbox (DESIGN
	// §11). The kernel asks the person itself, every time: no standing
	// allowance and no --yes covers it. Refused with CodeDenied when the
	// person says no or nobody can be asked.
	Unconfined bool `json:"unconfined,omitempty"`
}

// ProcessResult is how a run ended. Stdout and Stderr keep the first
// MaxProcessOutput bytes each; the rest is read and dropped, counted in
// StdoutBytes and StderrBytes, and flagged Truncated.
type ProcessResult struct {
	ExitCode        int    `json:"exit_code"`        // -1 when ended by a signal
	Signal          string `json:"signal,omitempty"` // the signal that ended it
	Stdout          []byte `json:"stdout,omitempty"`
	Stderr          []byte `json:"stderr,omitempty"`
	StdoutBytes     int64  `json:"stdout_bytes"`
	StderrBytes     int64  `json:"stderr_bytes"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
	TimedOut        bool   `json:"timed_out,omitempty"`
	Cancelled       bool   `json:"cancelled,omitempty"`
	// Confined says what the OS let the process reach, when it ran
	// confined (DESIGN §11): a failure it reports as "permission denied"
	// on anything else was the sandbox refusing it. Empty when the
	// operator turned the sandbox off.
	Confined string `json:"confined,omitempty"`
}

// ConfinedShellKey is the config key (Sys.Config) through which the
// kernel tells a capsule whether the operator lets commands that run
// confined start without asking the person ("auto", config.toml
// [approval] confined_shell, and only while processes really run
// confined) or not ("ask"). The kernel answers it, whatever the capsule's
// own configuration holds.
const ConfinedShellKey = "astrid.approval.confined_shell"

// RequestSettingsKey is the config key (Sys.Config) through which the
// kernel tells a capsule which provider settings the request it serves
// carries: a short fingerprint of the client's settings (never the values),
// or "" when the request carries none. A capsule that caches what depends
// on those settings (the provider registry's readiness) keys its cache by
// it, so one client's key never makes a provider look ready to another.
const RequestSettingsKey = "astrid.request.settings"

// Process limits.
const (
	// MaxProcessOutput caps what is kept of each of stdout and stderr.
	MaxProcessOutput = 1 << 20
	// MaxProcessArgs caps the program, arguments and environment
	// together, in bytes.
	MaxProcessArgs = 128 << 10
	// MaxProcessStdin caps ProcessRequest.Stdin.
	MaxProcessStdin = 10 << 20
	// ProcessGrace is how long a program has between SIGINT and SIGKILL.
	ProcessGrace = 2 * time.Second
	// ProcessPath is the PATH programs are found on and run with.
	ProcessPath = "/usr/local/bin:/usr/bin:/bin"
)

// SubscriptionID names a subscription within one capsule.
type SubscriptionID uint64

// MaxRecvTimeout caps a single Recv wait (upstream: 60 s).
const MaxRecvTimeout = 60 * time.Second

// Message is what a capsule receives from a subscription.
type Message struct {
	Topic string `json:"topic"`
	// Payload is the guest form of the payload (custom and raw_json
	// unwrapped, other variants tagged).
	Payload   []byte `json:"payload"`
	SourceID  string `json:"source_id"`
	Principal string `json:"principal,omitempty"`
	// Host is the id of the host the message was published on, when that
	// is another host of a bus spanning hosts; empty for this host's own
	// (ipc.Envelope.Host). Only the receiving host's transport sets it.
	Host string `json:"host,omitempty"`
	// Lost counts messages this subscription lost (evicted) since the
	// previous receive.
	Lost uint64 `json:"lost,omitempty"`
}

// FileInfo is the result of FSStat.
type FileInfo struct {
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	IsDir   bool      `json:"is_dir"`
	Mode    uint32    `json:"mode"`
	ModTime time.Time `json:"mod_time"`
}

// DirEntry is one entry of FSList.
type DirEntry struct {
	Name  string `json:"name"`
	IsDir bool   `json:"is_dir"`
}

// HTTPRequest is an outgoing request.
type HTTPRequest struct {
	Method  string              `json:"method"`
	URL     string              `json:"url"`
	Headers map[string][]string `json:"headers,omitempty"`
	Body    []byte              `json:"body,omitempty"`
}

// HTTPResponse is its answer; bodies are capped by MaxHTTPBody.
type HTTPResponse struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers,omitempty"`
	Body    []byte              `json:"body,omitempty"`
}

// MaxHTTPBody caps request and response bodies.
const MaxHTTPBody = 10 << 20

// MaxFileSize caps a single FSRead or FSWrite (upstream: 50 MB).
const MaxFileSize = 50 << 20

// LogLevel is a log severity, numerically equal to log/slog's levels.
type LogLevel int

// The four levels.
const (
	LogDebug LogLevel = -4
	LogInfo  LogLevel = 0
	LogWarn  LogLevel = 4
	LogError LogLevel = 8
)
