package approval

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the approval layer's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// ID is the capsule's id (its manifest's package name).
const ID = "astrid-capsule-approval"

// Config keys ([env]) and their defaults. The kernel fills a key the
// operator left unset with the manifest's default; the code keeps the same
// defaults for a host that does not (a unit test's).
const (
	TimeoutKey     = "approval_timeout_secs"
	ApproversKey   = "approvers"
	DefaultTimeout = 300.0
	// DefaultApprovers are the CLI's frontend ids: its tool client
	// (internal/toolclient) and its agent client (internal/agentclient).
	DefaultApprovers = "astrid-cli,astrid-agent-client"
)

// New returns the approval layer's code.
func New() *sdk.Capsule {
	c := sdk.New("Asks the person before a tool that changes things runs")
	c.Handle(ipc.ToolRequestExecuteTopic, "handle_execute_request", handleRequest)
	c.Handle(ipc.ApprovalResponseTopic("*"), "handle_approval_response", handleResponse)
	c.Handle(ipc.WatchdogTickTopic, "handle_watchdog_tick", handleTick)
	c.Handle(ipc.CapsulesLoadedTopic, "handle_capsules_loaded", handleCapsulesLoaded)
	c.Handle(ipc.ToolRequestCancelTopic, "handle_cancel", handleCancel)
	c.Publishes(ipc.ApprovalRequestTopic)
	c.Publishes(ipc.ToolRequestExecuteTopic)
	c.Publishes(ipc.ToolExecuteResultTopic)
	c.Publishes(ipc.ToolRequestDescribeTopic)
	c.Subscribes(ipc.ToolDescribeResponsePattern)
	return c
}

// timeoutSecs is approval_timeout_secs: a positive number of seconds (a
// decimal is allowed, so tests need not wait minutes), else the default.
func timeoutSecs(c *sdk.Call) float64 {
	v, set := c.Config(TimeoutKey)
	secs, ok := parseTimeout(v, set)
	if !ok {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: %s = %q is not a number of seconds in (0, 86400]; using %g", TimeoutKey, v, DefaultTimeout))
	}
	return secs
}

// parseTimeout reads approval_timeout_secs: unset or empty is the
// default; so is a value that is not a number in (0, 86400] (a question
// waits at most a day), and then ok is false.
func parseTimeout(v string, set bool) (secs float64, ok bool) {
	if !set || strings.TrimSpace(v) == "" {
		return DefaultTimeout, true
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(secs > 0) || secs > 86400 {
		return DefaultTimeout, false
	}
	return secs, true
}

// approvers is the [env] approvers list: the source ids whose answers
// count. Empty or unset is the CLI's frontends.
func approvers(c *sdk.Call) []string {
	v, _ := c.Config(ApproversKey)
	if out := splitIDs(v); len(out) > 0 {
		return out
	}
	return splitIDs(DefaultApprovers)
}

func splitIDs(v string) []string {
	var out []string
	for _, id := range strings.Split(v, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// formatSecs writes a timeout as the person set it: 300, 0.5.
func formatSecs(secs float64) string { return strconv.FormatFloat(secs, 'f', -1, 64) }
