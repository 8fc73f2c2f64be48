package chatui

import (
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// blockKind says what a block of the current turn holds.
type blockKind uint8

const (
	textBlock   blockKind = iota + 1 // the model's text, as it streams
	toolBlock                        // one tool call
	noticeBlock                      // a line of the UI's own (an outcome, an error)
)

// block is one piece of the current turn, shown live until it is finished
// and then printed above the UI for good.
type block struct {
	kind blockKind
	text string // textBlock: the text; noticeBlock: the line
	// noticeBlock: how to show it.
	tone tone

	// toolBlock
	started  ipc.AgentToolStarted
	finished *ipc.AgentToolFinished
	// progress is the provider's last report while the call runs.
	progress *ipc.AgentToolProgress
	// decision is the person's answer to a question about this call
	// ("" if none was asked).
	decision string
}

// appendText adds streamed text to the turn.
func (m *Model) appendText(s string) {
	if s == "" {
		return
	}
	if n := len(m.blocks); n > 0 && m.blocks[n-1].kind == textBlock {
		m.blocks[n-1].text += s
		return
	}
	m.blocks = append(m.blocks, block{kind: textBlock, text: s})
}

func (m *Model) appendNotice(t tone, line string) {
	m.blocks = append(m.blocks, block{kind: noticeBlock, tone: t, text: line})
}

// toolBlockOf is the block of call id, or nil.
func (m *Model) toolBlockOf(callID string) *block {
	for i := range m.blocks {
		if m.blocks[i].kind == toolBlock && m.blocks[i].started.CallID == callID {
			return &m.blocks[i]
		}
	}
	return nil
}

// settle moves what is finished at the front of the turn to the outbox,
// in order: complete lines of text, finished tool calls, notices. A tool
// call still running holds back everything after it, so the scrollback
// reads in the order things happened. With all, everything goes (the
// turn ended).
func (m *Model) settle(all bool) {
	for len(m.blocks) > 0 {
		b := &m.blocks[0]
		switch b.kind {
		case textBlock:
			if len(m.blocks) == 1 && !all {
				// Only whole markdown blocks leave, rendered; the block
				// being written stays live, as text.
				if i := markdownCut(b.text); i > 0 {
					m.print(m.md.render(b.text[:i], m.width)...)
					b.text = b.text[i:]
				}
				return
			}
			if strings.TrimSpace(b.text) != "" {
				m.print(m.md.render(b.text, m.width)...)
			}
		case toolBlock:
			if b.finished == nil && !all {
				return
			}
			m.print(m.toolLines(*b, all)...)
		case noticeBlock:
			m.print(styled(b.tone, shownLine(b.text)))
		}
		m.blocks = m.blocks[1:]
	}
}

// print queues lines to go above the UI.
func (m *Model) print(lines ...string) {
	m.outbox = append(m.outbox, lines...)
}

// takeOutbox returns the queued lines and empties the queue.
func (m *Model) takeOutbox() []string {
	out := m.outbox
	m.outbox = nil
	return out
}
