package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// turnPrinter shows one turn of `astrid -p` as it happens: the answer's
// text on stdout as it streams, a one-line note per tool call on stderr;
// or, with --json, every event as one JSON line on stdout.
type turnPrinter struct {
	mu       sync.Mutex
	out, err io.Writer
	json     bool
	// streamed is the text already written to out, so that a final
	// response repeating it is not printed twice.
	streamed  string
	lineStart bool
	// finished are the calls whose result was shown: a progress report
	// that comes after it (through a daemon it has a route of its own)
	// is late news and is not printed.
	finished map[string]bool
}

func newTurnPrinter(out, errOut io.Writer, asJSON bool) *turnPrinter {
	return &turnPrinter{out: out, err: errOut, json: asJSON, lineStart: true, finished: map[string]bool{}}
}

// jsonEvent is one line of --json output.
type jsonEvent struct {
	Event string `json:"event"`
	Data  any    `json:"data"`
}

func (p *turnPrinter) emit(kind string, data any) {
	b, err := json.Marshal(jsonEvent{Event: kind, Data: data})
	if err != nil {
		return
	}
	fmt.Fprintf(p.out, "%s\n", b)
}

func (p *turnPrinter) delta(d ipc.AgentStreamDelta) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		p.emit("delta", d)
		return
	}
	fmt.Fprint(p.out, d.Delta)
	p.streamed += d.Delta
	if d.Delta != "" {
		p.lineStart = d.Delta[len(d.Delta)-1] == '\n'
	}
}

func (p *turnPrinter) toolStarted(e ipc.AgentToolStarted) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		p.emit("tool_started", e)
		return
	}
	p.breakLine()
	fmt.Fprintf(p.err, "→ %s %s\n", e.Name, oneLine(compactJSON(e.Arguments), 120))
}

func (p *turnPrinter) toolFinished(e ipc.AgentToolFinished) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished[e.CallID] = true
	if p.json {
		p.emit("tool_finished", e)
		return
	}
	p.breakLine()
	mark := "✓"
	if e.IsError {
		mark = "✗"
	}
	took := "<1ms"
	if e.DurationMS > 0 {
		took = (time.Duration(e.DurationMS) * time.Millisecond).String()
	}
	fmt.Fprintf(p.err, "%s %s (%s) %s\n", mark, e.Name, took, oneLine(e.Summary, 100))
}

// toolProgress notes how far a tool call got on stderr ("… name: 2/5
// message"), as its provider reported it.
func (p *turnPrinter) toolProgress(e ipc.AgentToolProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished[e.CallID] {
		return
	}
	if p.json {
		p.emit("tool_progress", e)
		return
	}
	p.breakLine()
	fmt.Fprintf(p.err, "… %s\n", oneLine(e.Text(), 160))
}

// compacted notes a compaction of the session's history on stderr.
func (p *turnPrinter) compacted(e ipc.AgentCompacted) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		p.emit("compacted", e)
		return
	}
	p.breakLine()
	fmt.Fprintf(p.err, "astrid: %s\n", e.Text())
}

func (p *turnPrinter) approval(q ipc.ApprovalRequired) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		p.emit("approval", q)
	}
}

// final prints the turn's last word: what of the answer was not streamed
// yet (a provider may send its text in one piece), or the reason the turn
// ended without one, on stderr.
func (p *turnPrinter) final(r ipc.AgentResponse) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		p.emit("response", r)
		return
	}
	switch r.Outcome {
	case ipc.OutcomeCompacted:
		fmt.Fprintln(p.out, r.Text)
	case ipc.OutcomeAnswer, "":
		rest := r.Text
		if len(p.streamed) <= len(rest) && rest[:len(p.streamed)] == p.streamed {
			rest = rest[len(p.streamed):]
		} else if p.streamed != "" {
			rest = "" // streamed text differs from the final text: keep what was shown
		}
		fmt.Fprint(p.out, rest)
		p.streamed += rest
		if p.streamed != "" && p.streamed[len(p.streamed)-1] != '\n' {
			fmt.Fprintln(p.out)
		}
	default:
		p.breakLine()
		fmt.Fprintf(p.err, "astrid: %s\n", r.Text)
	}
}

// usageLine is a turn's token counts and cost as -p and chat show them
// ("" when the provider reported none): the cost only when the agent's
// price table (astrid-capsule-react's built-in one, under its [env]
// prices) knows the model.
func usageLine(r ipc.AgentResponse) string {
	if r.Usage == nil {
		return ""
	}
	u := r.Usage
	line := fmt.Sprintf("tokens: %d in", u.InputTokens)
	if u.CachedTokens > 0 {
		line += fmt.Sprintf(" (%d cached)", u.CachedTokens)
	}
	line += fmt.Sprintf(", %d out", u.OutputTokens)
	if r.CostUSD != nil {
		line += fmt.Sprintf(", cost $%.4f", *r.CostUSD)
	}
	return line
}

// breakLine ends a line of streamed text before a note on stderr, so the
// two streams do not interleave mid-line on a terminal. The caller holds
// p.mu.
func (p *turnPrinter) breakLine() {
	if !p.lineStart {
		fmt.Fprintln(p.out)
		p.lineStart = true
	}
}

// turnExitCode is the exit status `astrid -p --help` promises for a
// turn's outcome.
func turnExitCode(outcome string) int {
	switch outcome {
	case ipc.OutcomeAnswer, ipc.OutcomeCompacted, "":
		return 0
	case ipc.OutcomeTimeout:
		return 124 // as timeout(1) reports it
	case ipc.OutcomeCancelled:
		return 130
	}
	return 1 // error, empty model output, iteration cap
}
