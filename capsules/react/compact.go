package react

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// phaseCompact: the turn waits for the model's summary of older messages.
const phaseCompact phase = "compacting"

// compactState is a compaction in flight.
type compactState struct {
	// Upto is how many stored messages the summary will stand for.
	Upto int `json:"upto"`
	// Messages is how many messages of the view go into the summary.
	Messages int `json:"messages"`
	// Before is the estimated input of the request that set it off.
	Before int `json:"before"`
	// Forced: asked for (ActionCompact); the turn ends with it.
	Forced bool `json:"forced,omitempty"`
}

// maxCompactionsPerTurn bounds the compactions of one turn: a tail that
// is still too large after two is sent as it is (the provider then says
// whether it fits).
const maxCompactionsPerTurn = 2

// keepShare is the part of the budget the newest messages may keep,
// uncompacted, in percent.
const keepShare = 30

// compactionSystem instructs the summary request.
const compactionSystem = `You write the summary that will replace the earlier part of a conversation between a user and an AI agent, so that the agent can go on without it. ` +
	`Keep every fact, name, number, identifier, file path, decision, result and code word that was stated, and what the user asked for and what was done, and what is still open. ` +
	`A summary of even earlier messages may open the transcript: carry its content over. Answer with the summary alone, no preamble.`

// splitPoint is where msgs (a view) is cut: msgs[:i] goes into the
// summary, msgs[i:] is kept. A cut never leaves a tool result without its
// call (msgs[i] is no tool message), and leaves more than an earlier
// summary to compact. Below the threshold the newest messages within
// keepShare of the budget are kept; forced, everything before the last
// user message. 0: nothing can be compacted.
func splitPoint(t *turn, msgs []ipc.Message, forced bool) int {
	first := 1
	if t.Summarized {
		first = 2
	}
	valid := func(i int) bool { return i >= first && i < len(msgs) && msgs[i].Role != ipc.RoleTool }
	if forced {
		for i := len(msgs) - 1; i >= first; i-- {
			if msgs[i].Role == ipc.RoleUser && valid(i) {
				return i
			}
		}
		return 0
	}
	keep := t.Budget / 100 * keepShare * bytesPerToken
	tail, best := 0, 0
	for i := len(msgs) - 1; i >= first; i-- {
		tail += messageBytes(msgs[i])
		if !valid(i) {
			continue
		}
		if tail > keep {
			if best == 0 {
				best = i // the newest cut there is: the tail is one large round
			}
			break
		}
		best = i
	}
	return best
}

// messageBytes is m's size on the wire (an estimate's input).
func messageBytes(m ipc.Message) int {
	b, err := json.Marshal(m)
	if err != nil {
		return 0
	}
	return len(b)
}

// startCompaction asks t's model to summarize msgs[:i] (msgs is the view
// the request over, before estimated tokens, was built from). Nothing to
// compact sends msgs as they are.
func startCompaction(c *sdk.Call, t *turn, msgs []ipc.Message, before int, forced bool) error {
	i := splitPoint(t, msgs, forced)
	if i == 0 {
		return compactionFailed(c, t, compactState{Before: before, Forced: forced}, msgs, "there is no earlier turn to compact")
	}
	st := compactState{Upto: t.storedIndex(i), Messages: i, Before: before, Forced: forced}
	if older := estimateTokens(viewBytes(msgs[:i])); !forced && older < before-t.Budget {
		// Even a summary of nothing would leave the request over the
		// threshold: the system prompt, the tools and the newest turns
		// take the rest. Summarizing would cost a request and gain nothing.
		return compactionFailed(c, t, st, msgs, fmt.Sprintf(
			"the older messages hold about %d tokens, too few to bring the request (about %d) under %d %% of the %d-token window; the system prompt, tools and newest turns take the rest",
			older, before, t.Budget*100/max(t.Window, 1), t.Window))
	}
	transcript := renderTranscript(msgs[:i], max(t.Budget*bytesPerToken*3/4, 4096))
	id := newID(c, "cmp")
	req, err := ipc.LLMRequest{RequestID: id, Model: t.Model, System: compactionSystem,
		Messages: []ipc.Message{ipc.TextMessage(ipc.RoleUser, "<transcript>\n"+transcript+"</transcript>\n\nWrite the summary now.")}}.MarshalJSON()
	if err != nil {
		return compactionFailed(c, t, st, msgs, "the summary request was not built: "+err.Error())
	}
	topic := ipc.LLMGenerateTopic(t.Provider)
	streamers, err := c.Interceptors(topic)
	if err == nil && len(streamers) == 0 {
		err = fmt.Errorf("no LLM provider %q is loaded", t.Provider)
	}
	if err != nil {
		return compactionFailed(c, t, st, msgs, err.Error())
	}
	t.Phase, t.RequestID, t.Streamers = phaseCompact, id, streamers
	t.PhaseStart = nowMS(c)
	t.Text, t.Streamed, t.Calls, t.Approvals, t.PausedAt = "", nil, nil, nil, 0
	t.Compacting = &st
	t.Compactions++
	if err := c.KVSet(keyRequest+t.RequestID, []byte(t.SessionID)); err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The summary request was not recorded: %v", err))
	}
	if err := saveTurn(c, t); err != nil {
		return finish(c, t, ipc.OutcomeError, err.Error())
	}
	if err := c.Request(topic, req, hostapi.Request{ReplyTo: ipc.LLMStreamTopic(t.Provider), CorrelationID: t.RequestID, Timeout: requestTimeout}); err != nil {
		return compactionFailed(c, t, st, nil, fmt.Sprintf("the summary request to provider %q was not sent: %v", t.Provider, err))
	}
	return nil
}

// renderTranscript writes msgs as text for the summary request, within
// about limit bytes: long texts and tool results are cut in the middle,
// and when that is not enough the oldest messages after an opening
// summary are left out, saying how many.
func renderTranscript(msgs []ipc.Message, limit int) string {
	for _, per := range []int{16 << 10, 4 << 10, 1 << 10, 256} {
		lines := make([]string, len(msgs))
		total := 0
		for i, m := range msgs {
			lines[i] = renderMessage(m, per)
			total += len(lines[i])
		}
		if total <= limit || per == 256 {
			// Leave out the oldest (but an opening summary) until it fits.
			drop, from := 0, 0
			if len(msgs) > 0 && strings.HasPrefix(lines[0], "user: [Summary of") {
				from = 1
			}
			for total > limit && from+drop < len(lines)-1 {
				total -= len(lines[from+drop])
				drop++
			}
			if drop > 0 {
				note := fmt.Sprintf("[%d older messages are left out: too long to summarize at once]\n", drop)
				lines = append(append(lines[:from:from], note), lines[from+drop:]...)
			}
			return strings.Join(lines, "")
		}
	}
	return ""
}

// renderMessage is one message of a transcript, its parts cut to per
// bytes.
func renderMessage(m ipc.Message, per int) string {
	var b strings.Builder
	switch m.Content.Kind {
	case ipc.ContentText:
		fmt.Fprintf(&b, "%s: %s\n", m.Role, cutMiddle(m.Content.Text, per))
	case ipc.ContentMultiPart:
		for _, p := range m.Content.Parts {
			if p.Type == ipc.PartText {
				fmt.Fprintf(&b, "%s: %s\n", m.Role, cutMiddle(p.Text, per))
			} else {
				fmt.Fprintf(&b, "%s: [%s attachment]\n", m.Role, p.Type)
			}
		}
	case ipc.ContentToolCalls:
		for _, call := range m.Content.ToolCalls {
			fmt.Fprintf(&b, "assistant calls tool %s %s\n", call.Name, cutMiddle(string(call.Arguments), per))
		}
	case ipc.ContentToolResult:
		kind := "result"
		if m.Content.ToolResult.IsError {
			kind = "error"
		}
		fmt.Fprintf(&b, "tool %s: %s\n", kind, cutMiddle(m.Content.ToolResult.Content, per))
	}
	return b.String()
}

// compactStream follows the summary's stream (t in phaseCompact): text is
// collected, not shown; tool calls are ignored; the end records the
// summary, or falls back.
func compactStream(c *sdk.Call, t *turn, ev ipc.StreamEvent) error {
	switch ev.Kind {
	case ipc.StreamTextDelta:
		t.Text += ev.Text
		if len(t.Text) > maxSummaryBytes {
			return compactionFailed(c, t, *t.Compacting, nil, fmt.Sprintf("the summary passed %d bytes", maxSummaryBytes))
		}
	case ipc.StreamUsage:
		t.addUsage(ev.Usage) // the summary's tokens are the turn's too
		countTokens(c, ev.Usage)
	case ipc.StreamError:
		return compactionFailed(c, t, *t.Compacting, nil, fmt.Sprintf("the provider %q failed: %s", t.Provider, ev.Text))
	case ipc.StreamDone:
		return compactionDone(c, t)
	}
	if err := saveTurn(c, t); err != nil {
		return finish(c, t, ipc.OutcomeError, err.Error())
	}
	return nil
}

// maxSummaryBytes is the session store's bound on a summary.
const maxSummaryBytes = 256 << 10

// compactionDone records the summary in the session store and goes on
// with the compacted view (or, forced, ends the turn).
func compactionDone(c *sdk.Call, t *turn) error {
	dropKey(c, keyRequest+t.RequestID)
	st := *t.Compacting
	summary := strings.TrimSpace(t.Text)
	t.Text = ""
	if summary == "" {
		return compactionFailed(c, t, st, nil, "the model returned an empty summary")
	}
	history, comp, err := readHistory(c, t.SessionID, &storedCompaction{Summary: summary, Upto: st.Upto})
	if err != nil {
		return compactionFailed(c, t, st, nil, "the summary was not stored: "+err.Error())
	}
	t.Compacting = nil
	msgs := view(t, history, comp, t.ToolResultMax)
	ev := ipc.AgentCompacted{SessionID: t.SessionID, TurnID: t.TurnID, OK: true, Messages: st.Upto, TokensBefore: st.Before, Window: t.Window}
	c.Log(hostapi.LogInfo, fmt.Sprintf("react: session %q: compacted %d messages into a %d-byte summary", t.SessionID, st.Upto, len(summary)))
	if st.Forced {
		t.RequestID = "" // the summary's stream has ended: nothing to cancel
		ev.TokensAfter = estimateTokens(viewBytes(msgs))
		publishEvent(c, ipc.AgentCompactedTopic, ev)
		return finish(c, t, ipc.OutcomeCompacted, fmt.Sprintf("Compacted the first %d messages of session %s into a summary (about %d → %d tokens of history); the session keeps them all.",
			st.Upto, t.SessionID, st.Before, ev.TokensAfter))
	}
	t.Announce = &ev
	return generate(c, t, withPrefix(msgs, t.Prefix))
}

// compactionFailed says why nothing was compacted and goes on: msgs (nil:
// read the history again) are sent as they are, or, forced, the turn ends
// with the reason.
func compactionFailed(c *sdk.Call, t *turn, st compactState, msgs []ipc.Message, reason string) error {
	if t.Phase == phaseCompact {
		dropKey(c, keyRequest+t.RequestID)
	}
	t.Compacting, t.Text, t.NoCompact = nil, "", true
	c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: nothing compacted: %s", t.SessionID, reason))
	publishEvent(c, ipc.AgentCompactedTopic, ipc.AgentCompacted{SessionID: t.SessionID, TurnID: t.TurnID, TokensBefore: st.Before, Window: t.Window, Reason: reason})
	if st.Forced {
		return finish(c, t, ipc.OutcomeError, "Nothing was compacted: "+reason+".")
	}
	if msgs == nil {
		history, comp, err := readHistory(c, t.SessionID, nil)
		if err != nil {
			return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The history of session %q was not read again: %v", t.SessionID, err))
		}
		msgs = withPrefix(view(t, history, comp, t.ToolResultMax), t.Prefix)
	}
	return generate(c, t, msgs)
}

// viewBytes is the wire size of msgs.
func viewBytes(msgs []ipc.Message) int {
	n := 0
	for _, m := range msgs {
		n += messageBytes(m)
	}
	return n
}

// compactNow is ActionCompact: the session's history, all but its last
// exchange, summarized now; the turn ends with the result.
func compactNow(c *sdk.Call, t *turn) error {
	history, comp, err := readHistory(c, t.SessionID, nil)
	if err != nil {
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeError, fmt.Sprintf("The history of session %q was not read: %v", t.SessionID, err))
	}
	msgs := view(t, history, comp, t.ToolResultMax)
	return startCompaction(c, t, msgs, estimateTokens(viewBytes(msgs)), true)
}
