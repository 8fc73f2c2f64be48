package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/runtime"
)

// DefaultStatusInterval is how often the daemon rewrites its status file.
const DefaultStatusInterval = 2 * time.Second

// Status is what `astrid status` shows of a running daemon: a snapshot the
// daemon writes to run/status.json (atomically) at boot, after a reload and
// every few seconds. The socket serves the same value live (Reporter), with
// the socket's clients and bytes, which only the uplink counts.
type Status struct {
	Pid       int    `json:"pid"`
	Home      string `json:"home,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// Sandbox says how the processes capsules start are confined
	// (kernel.SandboxState): "enforce (Landlock ABI 7)", or why not.
	Sandbox string    `json:"sandbox,omitempty"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	// Scope is ScopePrincipal when the status is cut to one principal's
	// view (view.go); empty for the whole.
	Scope string `json:"scope,omitempty"`
	// Turns is the number of agent turns running (the asker's own, in a
	// principal's view).
	Turns int `json:"turns"`
	// Clients is the number of clients connected to the socket (the
	// asker's principal's, in a principal's view); live status only.
	Clients  int              `json:"clients,omitempty"`
	Capsules []runtime.Status `json:"capsules"`
	// Dispatch and Bus are nil in a principal's view.
	Dispatch *dispatch.Stats `json:"dispatch,omitempty"`
	Bus      *BusStats       `json:"bus,omitempty"`
	// Principals is each principal's use of the CPU ledger and, live, of
	// the socket.
	Principals map[string]PrincipalUsage `json:"principals"`
	// NATS is the bus across hosts; absent when it stays on this host.
	NATS *NATSStatus `json:"nats,omitempty"`
	// Idle is the idle timer of a daemon a command started by itself;
	// absent when none is armed (the owner's view only).
	Idle *Idle `json:"idle,omitempty"`
}

// BusStats is the bus's counters without the per-route detail.
type BusStats struct {
	Published      uint64 `json:"published"`
	Delivered      uint64 `json:"delivered"`
	Unrouted       uint64 `json:"unrouted"`
	Rejected       uint64 `json:"rejected_too_large"`
	Evicted        uint64 `json:"evicted"`
	DroppedOnClose uint64 `json:"dropped_on_close"`
	Lagged         uint64 `json:"lagged"`
	Routes         int    `json:"routes"`
}

// PrincipalUsage is one principal's line of the CPU ledger and, in a live
// status, its use of the socket.
type PrincipalUsage struct {
	CPUMicros int64  `json:"cpu_us"`
	Calls     uint64 `json:"calls"`
	Refused   uint64 `json:"refused"`
	Clients   int    `json:"clients,omitempty"`
	BytesIn   uint64 `json:"bytes_in,omitempty"`
	BytesOut  uint64 `json:"bytes_out,omitempty"`
	// Turns are the agent turns that ended since the daemon started, with
	// the tokens their providers reported and, for the turns of a priced
	// model, their cost (turns.go).
	Turns        uint64   `json:"turns,omitempty"`
	InputTokens  uint64   `json:"input_tokens,omitempty"`
	OutputTokens uint64   `json:"output_tokens,omitempty"`
	CachedTokens uint64   `json:"cached_tokens,omitempty"`
	CostUSD      *float64 `json:"cost_usd,omitempty"`
}

func busStats(s bus.Stats) *BusStats {
	return &BusStats{
		Published: s.Published, Delivered: s.Delivered, Unrouted: s.Unrouted, Rejected: s.Rejected,
		Evicted: s.Evicted, DroppedOnClose: s.DroppedOnClose, Lagged: s.Lagged, Routes: len(s.Routes),
	}
}

// snapshot reads k's counters now.
func snapshot(k *kernel.Kernel, base Status, running int) Status {
	s := base
	s.Updated = time.Now().UTC()
	s.Turns = running
	s.Capsules = k.Runtime.List()
	d := k.Dispatcher.Stats()
	s.Dispatch = &d
	s.Bus = busStats(k.Bus.Stats())
	s.NATS = natsStatus(k)
	s.Principals = map[string]PrincipalUsage{}
	for p, u := range k.Ledger.Snapshot() {
		s.Principals[p] = PrincipalUsage{CPUMicros: u.CPU.Microseconds(), Calls: u.Calls, Refused: u.Refused}
	}
	return s
}

func writeStatus(path string, s Status) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}

// ReadStatus reads the status file of the daemon running for home.
func ReadStatus(home string) (Status, error) {
	var s Status
	data, err := os.ReadFile(PathsOf(home).Status)
	if err != nil {
		return s, fmt.Errorf("daemon: status: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("daemon: status file %s: %w", PathsOf(home).Status, err)
	}
	return s, nil
}
