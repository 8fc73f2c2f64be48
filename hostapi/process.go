package hostapi

// ProcessSpawnRequest starts a background process: a ProcessRequest whose
// Timeout, if set, is the process's lifetime (then it is ended as
// ProcessKill ends it, and its logs say TimedOut).
type ProcessSpawnRequest struct {
	ProcessRequest
	// Persistent asks that the process outlive a reload of its capsule
	// (the new instance reads and kills it by the same id); it still ends
	// when the capsule is unloaded for good or the kernel stops. It needs
	// [capabilities] allow_persistent.
	Persistent bool `json:"persistent,omitempty"`
}

// ProcessHandle names a background process.
type ProcessHandle struct {
	// ID is unguessable, but it is not what protects the process: an id
	// works only for the capsule and principal that spawned it.
	ID         string `json:"id"`
	Persistent bool   `json:"persistent,omitempty"`
}

// ProcessLogs is a background process's output since the previous read and
// its state. The host keeps the newest MaxProcessLogBuffer bytes of each
// stream that nobody read yet; older unread bytes are dropped and counted
// in StdoutDropped and StderrDropped.
type ProcessLogs struct {
	Stdout        []byte `json:"stdout,omitempty"`
	Stderr        []byte `json:"stderr,omitempty"`
	StdoutDropped int64  `json:"stdout_dropped,omitempty"`
	StderrDropped int64  `json:"stderr_dropped,omitempty"`
	// StdoutBytes and StderrBytes count everything the process wrote
	// since it started.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
	Running     bool  `json:"running"`
	// ExitCode and Signal say how it ended once Running is false.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// Killed: ProcessKill, an unload or the kernel's stop ended it;
	// TimedOut: its Timeout did; OverLimit: it had more than
	// MaxProcessDescendants processes at once.
	Killed    bool `json:"killed,omitempty"`
	TimedOut  bool `json:"timed_out,omitempty"`
	OverLimit bool `json:"over_limit,omitempty"`
}

// Background process limits.
const (
	// MaxBackgroundProcesses is how many background processes one
	// capsule holds at once (over all its principals and instances).
	MaxBackgroundProcesses = 8
	// MaxProcessLogBuffer caps the unread output kept per stream.
	MaxProcessLogBuffer = 1 << 20
	// MaxProcessDescendants caps the processes one run or background
	// process has at once (the fork-bomb guard).
	MaxProcessDescendants = 64
)
