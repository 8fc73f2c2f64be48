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
	f := &call.failure
	if f.topic != topic {
		return
	}
	var res ipc.ToolExecuteResult
	if err := res.UnmarshalJSON(f.payload); err != nil || res.CallID == "" {
		return
	}
	what := "the tool's result"
	if name, ok := ipc.ToolNameFromResultTopic(topic); ok {
		what = "tool " + name + "'s result"
	}
	res.Result.Content = fmt.Sprintf("%s was not delivered: it is %d bytes, over the largest message the bus carries; ask for less (a range of lines, a narrower pattern)", what, size)
	res.Result.IsError = true
	if res.Result.CallID == "" {
		res.Result.CallID = res.CallID
	}
	if out, err := res.MarshalJSON(); err == nil {
		f.payload = out
	}
}
