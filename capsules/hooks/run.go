package hooks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// Program is what every hook runs as: bash -c <command>.
const Program = "bash"

// run runs hook h for event with input on stdin, confined, and reads its
// answer. failed reports a run that could not start, was stopped (its
// timeout, a cancel, a signal): it decided nothing, and Problem says why.
func run(c *sdk.Call, h Hook, cfg Config, in Input) (v Verdict, failed bool) {
	in.PermissionMode = "default"
	in.Cwd = "."
	stdin, err := json.Marshal(in)
	if err != nil {
		return Verdict{Problem: fmt.Sprintf("its input could not be written: %v", err)}, true
	}
	secs := h.timeout(cfg)
	res, err := c.ProcessRun(hostapi.ProcessRequest{
		Program: Program,
		Args:    []string{"-c", h.Command},
		Stdin:   stdin,
		Timeout: time.Duration(secs) * time.Second,
		Env:     map[string]string{"ASTRID_HOOK_EVENT": in.HookEventName},
	})
	switch {
	case res.TimedOut || hostapi.CodeOf(err) == hostapi.CodeTimeout:
		return Verdict{Problem: fmt.Sprintf("did not finish within %d s and was stopped", secs)}, true
	case res.Cancelled || hostapi.CodeOf(err) == hostapi.CodeCancelled:
		return Verdict{Problem: "was cancelled"}, true
	case err != nil:
		return Verdict{Problem: fmt.Sprintf("could not run: %v", err)}, true
	case res.Signal != "":
		return Verdict{Problem: fmt.Sprintf("was killed by signal %s: %s", res.Signal, orNothing(clean(res.Stderr)))}, true
	}
	return Decide(in.HookEventName, res.ExitCode, res.Stdout, res.Stderr), false
}

// describe names a hook in messages: where it was configured and its
// command, cut.
func (h Hook) describe(event string) string {
	return fmt.Sprintf("%s hook %q (%s)", event, shorten(h.Command, 80), h.Origin)
}

// logVerdict logs what a hook run said that is not a decision: a problem,
// a systemMessage.
func logVerdict(c *sdk.Call, h Hook, event string, v Verdict) {
	if v.Problem != "" {
		c.Log(hostapi.LogWarn, fmt.Sprintf("hooks: %s %s", h.describe(event), v.Problem))
	}
	if v.Note != "" {
		c.Log(hostapi.LogInfo, fmt.Sprintf("hooks: %s says: %s", h.describe(event), v.Note))
	}
}
