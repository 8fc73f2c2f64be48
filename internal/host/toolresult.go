package host

import (
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

// tooLargeReply makes a call's registered failure reply say why the answer
// it stands in for was lost when the bus refused that answer as too large:
// the caller of a tool whose result is over the message cap is told so, not
// that the capsule "trapped" (issue 15.8). It changes only a tool result
// (ToolExecuteResult) registered for the very topic refused; anything else is
// kept as the capsule wrote it. size is what the capsule tried to publish.
// The caller holds call.mu.
func (call *Call) tooLargeReply(topic string, size int) {
	if call.failure.topic != topic {
		return
	}
	call.rewriteToolFailure(func(tool string) string {
		return fmt.Sprintf("%s's result was not delivered: it is %d bytes, over the largest message the bus carries; ask for less (a range of lines, a narrower pattern)", tool, size)
	})
}

// cancelledReply makes a call's registered failure reply, when it is a tool
// result, say that the call was cancelled (a cancel request named its key)
// rather than that the capsule "trapped, timed out or was cancelled": the
// person who cancelled a turn sees the tool's result say so. The caller
// holds call.mu.
func (call *Call) cancelledReply(cause error) {
	call.rewriteToolFailure(func(tool string) string {
		return fmt.Sprintf("%s was cancelled before it answered (%v); whatever it had started was stopped", tool, cause)
	})
}

// rewriteToolFailure replaces the content of the registered failure reply
// with say(tool) ("tool <name>", or "the tool") when that
// reply is a tool result (ToolExecuteResult); anything else is kept as the
// capsule wrote it. The caller holds call.mu.
func (call *Call) rewriteToolFailure(say func(what string) string) {
	f := &call.failure
	if f.topic == "" {
		return
	}
	var res ipc.ToolExecuteResult
	if err := res.UnmarshalJSON(f.payload); err != nil || res.CallID == "" {
		return
	}
	tool := "the tool"
	if name, ok := ipc.ToolNameFromResultTopic(f.topic); ok {
		tool = "tool " + name
	}
	res.Result.Content = say(tool)
	res.Result.IsError = true
	if res.Result.CallID == "" {
		res.Result.CallID = res.CallID
	}
	if out, err := res.MarshalJSON(); err == nil {
		f.payload = out
	}
}
