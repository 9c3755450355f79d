package acpserver

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// Gas City keeps what it reads as lines: its client (gastownhall/gascity,
// internal/runtime/acp/conn.go handleUpdate) splits the text of every block
// of an update's top-level content on "\n" and stores each piece as a line
// of its own (appendLine), which `gc peek` prints one per line. Mirroring
// each streamed chunk as it came would show an answer as "Hello⏎ from⏎
// the ⏎scrip⏎ted m⏎odel.". So on a connection that prompts with messages
// the mirrored content is line-buffered per message: a chunk's frame keeps
// its standard update, and its top-level content holds only the lines the
// chunk completed (without their last "\n": Gas City's split makes each
// block's end a line end). The rest of a line waits, and goes out in a
// frame of its own (an empty agent_message_chunk of the same message, plus
// the content) when the message ends: before the next message, thought,
// tool call, plan or usage of the same agent, before the turn's answer or a
// drain turn's closer, after a question asked out of band, or once it
// reaches maxTextBytes. Sub-agents stream concurrently: each has its own
// buffer.

// lineMirror is a session's line buffers, by source: "" for the session's
// own agent, else the sub-agent's id. Its mutex is held while a frame is
// queued, so frames leave in the order their text was buffered.
type lineMirror struct {
	mu      sync.Mutex
	pending map[string]*pendingLine
}

// pendingLine is a message's text not yet mirrored (no "\n" in it, or only
// a leading one), and what its flush frame needs.
type pendingLine struct {
	messageID string
	text      string
	meta      acp.Meta
	stored    func() bool // the last chunk's Stored: the flush is sent only if that chunk was
}

// sourceOf is the buffer an event's text goes to.
func sourceOf(m *agent.Member) string {
	if m != nil {
		return "sub:" + m.ID
	}
	return ""
}

// mirrorChunk queues c (a live agent_message_chunk of text) with the lines
// it completes as top-level content.
func (ss *session) mirrorChunk(c acp.ContentChunk, source string, stored func() bool) {
	m := &ss.lines
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		m.pending = map[string]*pendingLine{}
	}
	p := m.pending[source]
	if p != nil && p.messageID != c.MessageID {
		ss.flushLocked(source)
		p = nil
	}
	if p == nil {
		p = &pendingLine{messageID: c.MessageID}
		m.pending[source] = p
	}
	buf := p.text + c.Content.Text
	p.meta, p.stored = c.Meta, stored
	var out string
	if i := strings.LastIndexByte(buf, '\n'); i > 0 {
		// A lone leading "\n" (an empty line) cannot be sent by itself:
		// Gas City skips a block whose text is "". It waits for the next.
		out, buf = buf[:i], buf[i+1:]
	}
	if len(buf) >= maxTextBytes {
		out, buf = joinLines(out, buf), "" // a line too long to hold: send it as it is
	}
	p.text = buf
	_ = ss.srv.conn.NotifyIf("session/update", messagesNotification{SessionID: ss.id, Update: c, Content: lineBlocks(out)}, stored)
}

// flushLines sends what every buffer of the session holds.
func (ss *session) flushLines() {
	m := &ss.lines
	m.mu.Lock()
	defer m.mu.Unlock()
	for source := range m.pending {
		ss.flushLocked(source)
	}
}

// flushSource sends what source's buffer holds.
func (ss *session) flushSource(source string) {
	m := &ss.lines
	m.mu.Lock()
	defer m.mu.Unlock()
	ss.flushLocked(source)
}

// flushLocked sends source's held text (guarded by lines.mu).
func (ss *session) flushLocked(source string) {
	p := ss.lines.pending[source]
	if p == nil {
		return
	}
	delete(ss.lines.pending, source)
	if p.text == "" {
		return
	}
	u := acp.ContentChunk{SessionUpdate: string(agent.EventMessageChunk), Content: acp.TextBlock(""), MessageID: p.messageID, Meta: p.meta}
	_ = ss.srv.conn.NotifyIf("session/update", messagesNotification{SessionID: ss.id, Update: u, Content: lineBlocks(p.text)}, p.stored)
}

func joinLines(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// lineBlocks is text as top-level content blocks of at most maxTextBytes,
// cut at a line end where one is near (Gas City ends a line at each block's
// end), else at a rune boundary; nil for no text.
func lineBlocks(text string) []acp.ContentBlock {
	if text == "" {
		return nil
	}
	var out []acp.ContentBlock
	for len(text) > maxTextBytes {
		cut, next := maxTextBytes, maxTextBytes
		if i := strings.LastIndexByte(text[:maxTextBytes], '\n'); i > 0 {
			cut, next = i, i+1
		} else {
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			next = cut
		}
		out = append(out, acp.TextBlock(text[:cut]))
		text = text[next:]
	}
	if text != "" {
		out = append(out, acp.TextBlock(text))
	}
	return out
}
