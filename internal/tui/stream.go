package tui

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/acp"
)

// maxTail is the longest unfinished line kept live, in bytes.
const maxTail = 4096

// block is one item of the live region: a *textBlock or a *toolCall.
type block any

// textBlock is a streamed message (agent, thought or user): its finished
// lines are rendered once; the unfinished tail is redrawn as it grows.
type textBlock struct {
	kind  string // agent, thought, user
	md    markdown
	lines []string // rendered, not yet moved to the print queue
	// tail is the unfinished line: bytes, appended in place, since a
	// stream of one-character chunks would copy a growing string per
	// chunk.
	tail []byte
	// tailGen counts the changes of tail, and drawn is the tail as last
	// rendered for the live region (tailRows).
	tailGen int
	drawn   drawnTail
	closed  bool
	// A thought's source: its first lines, how many lines it has and
	// the last one, for the collapsed summary (thoughts.go).
	first    string
	lastSrc  string
	srcLines int
	lead     bool // its first line is the blank line after other output
}

// addText appends streamed text, rendering each line it completes.
func (m *model) addText(kind, text string) {
	var b *textBlock
	if n := len(m.live); n > 0 {
		if t, ok := m.live[n-1].(*textBlock); ok && t.kind == kind && !t.closed {
			b = t
		}
	}
	if b == nil {
		m.closeText()
		b = &textBlock{kind: kind, md: markdown{th: m.th}}
		if m.gap && kind != "user" {
			b.lines = append(b.lines, "") // a blank line after a card or another kind of text
			b.lead = true
		}
		m.gap = true
		m.live = append(m.live, b)
	}
	// Only the new text can hold a newline: the tail had none. A line
	// wholly in text is rendered from it, not copied into the tail first.
	b.tailGen++
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			b.tail = append(b.tail, text...)
			break
		}
		line := text[:i]
		if len(b.tail) > 0 {
			line = string(append(b.tail, line...))
			b.tail = b.tail[:0]
		}
		b.lines = m.appendText(b.lines, b, &b.md, line)
		text = text[i+1:]
	}
	// A line that keeps growing is broken (after a space, if it has one)
	// once it is long: the live region redraws the tail at every frame,
	// and would redraw all of it.
	for len(b.tail) > maxTail {
		cut := bytes.LastIndexByte(b.tail[:maxTail], ' ') + 1
		if cut < maxTail/2 {
			cut = maxTail
			for cut > 0 && !utf8.RuneStart(b.tail[cut]) {
				cut--
			}
		}
		b.lines = m.appendText(b.lines, b, &b.md, string(b.tail[:cut]))
		b.tail = b.tail[cut:]
	}
	m.drain()
}

// renderText renders one finished line of a text block.
func (m *model) renderText(b *textBlock, md *markdown, line string) []string {
	return m.appendText(nil, b, md, line)
}

// appendText appends renderText's lines to dst.
func (m *model) appendText(dst []string, b *textBlock, md *markdown, line string) []string {
	line = strings.TrimRight(line, "\r")
	switch b.kind {
	case "thought":
		if md == &b.md { // a finished line, not the tail drawn live
			b.srcLines++
			b.lastSrc = line
			if len(b.first) < 200 {
				b.first += line + "\n"
			}
		}
		return append(dst, wrapStyled(m.th.thought.Render(line), m.width, "  ", "  ")...)
	case "user":
		return append(dst, wrapStyled(m.th.bold.Render(line), m.width, m.th.accent.Render("› "), "  ")...)
	}
	return md.appendLine(dst, line, m.width)
}

// closeText ends the open text blocks: their tails become lines.
func (m *model) closeText() {
	for _, bl := range m.live {
		if t, ok := bl.(*textBlock); ok && !t.closed {
			if len(t.tail) > 0 {
				t.lines = m.appendText(t.lines, t, &t.md, string(t.tail))
				t.tail = nil
				t.tailGen++
			}
			t.closed = true
		}
	}
}

// drain moves what is finished at the head of the live region to the
// print queue, in order: a line is printed exactly once.
func (m *model) drain() {
	for len(m.live) > 0 {
		switch b := m.live[0].(type) {
		case *textBlock:
			if m.heldThought(b) {
				if !b.closed {
					return
				}
				m.collapseThought(b)
				break
			}
			m.printQ = append(m.printQ, b.lines...)
			clear(b.lines) // queued: the array is reused for the next lines
			b.lines = b.lines[:0]
			b.first, b.srcLines, b.lead = "", 0, false // printed: a later summary covers only what follows
			if !b.closed {
				return
			}
		case *toolCall:
			if !b.finished() {
				return
			}
			m.printQ = append(m.printQ, m.card(b)...)
			m.keepOutput(b)
		}
		m.live = m.live[1:]
	}
}

// settle ends a turn (or a replay): everything live goes to the
// scrollback, unfinished cards as they stand, then the final plan.
func (m *model) settle() {
	m.closeText()
	m.closeMembers("")
	for _, bl := range m.live {
		if c, ok := bl.(*toolCall); ok && !c.finished() {
			m.printQ = append(m.printQ, m.card(c)...)
			c.status = "completed" // printed; drain skips it below
		}
	}
	m.drain()
	m.live = nil
	m.tools = map[string]*toolCall{}
	if len(m.plan) > 0 {
		m.printQ = append(m.printQ, renderPlan(m.th, m.plan, m.width)...)
		m.plan = nil
	}
}

// printLines queues lines for the scrollback.
func (m *model) printLines(lines ...string) { m.printQ = append(m.printQ, lines...) }

// applyUpdate handles one session/update.
func (m *model) applyUpdate(raw json.RawMessage) {
	// The content is kept raw and decoded by itself for a chunk: one
	// pass over the whole update, not two, for the most frequent update.
	var head struct {
		SessionUpdate string          `json:"sessionUpdate"`
		Content       json.RawMessage `json:"content"`
		Meta          json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return
	}
	member, parent := memberOf(head.Meta)
	switch head.SessionUpdate {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		m.applyChunk(head.SessionUpdate, head.Content, member, parent)
	case "tool_call", "tool_call_update":
		var u acp.ToolCallUpdate
		if json.Unmarshal(raw, &u) != nil {
			return
		}
		c := m.tools[u.ToolCallID]
		if c == nil {
			m.closeText()
			c = &toolCall{id: u.ToolCallID, gap: m.gap && m.lastText(), cwd: m.opts.Cwd, member: member}
			m.gap = true
			m.tools[u.ToolCallID] = c
			m.live = append(m.live, c)
		}
		c.apply(u)
		if c.finished() && len(m.memberOrder) > 0 {
			m.closeMembers(c.id) // the members it started said all they will
		}
		m.drain()
	default:
		if member == "" { // a member's plan, usage or title is not the session's
			m.applySetting(head.SessionUpdate, raw)
		}
	}
}

// lastText tells whether the newest live block is text.
func (m *model) lastText() bool {
	if n := len(m.live); n > 0 {
		_, ok := m.live[n-1].(*textBlock)
		return ok
	}
	return false
}

// card renders a tool card, after a blank line when it follows text.
// While a permission question about the call is open, the question shows
// what it touches and the card only its head.
func (m *model) card(c *toolCall) []string {
	lines := renderToolCard(m.th, c, m.width)
	if m.perm != nil && m.perm.req.ToolCall.ToolCallID == c.id && len(lines) > 1 {
		lines = lines[:1]
	}
	if c.gap {
		lines = append([]string{""}, lines...)
	}
	return lines
}

// applyChunk handles a message, thought or user chunk; a
// member's (member.go) goes to that member's stream.
func (m *model) applyChunk(update string, content json.RawMessage, member, parent string) {
	var u struct{ Content acp.ContentBlock }
	if json.Unmarshal(content, &u.Content) != nil {
		return
	}
	m.applyContent(update, u.Content, member, parent)
}

// applyContent handles the content of a chunk; member and parent name the
// member that sent it, if one did (member.go).
func (m *model) applyContent(update string, content acp.ContentBlock, member, parent string) {
	u := struct{ Content acp.ContentBlock }{content}
	kind := "agent"
	switch update {
	case "agent_thought_chunk":
		kind = "thought"
	case "user_message_chunk":
		kind = "user"
	}
	// A live user chunk is another client's prompt (corvid serve shows a
	// prompt to every attachment but the one that sent it; the TUI echoed
	// its own).
	if member != "" && kind != "user" {
		if u.Content.Type == "text" {
			m.addMemberText(member, parent, kind, u.Content.Text)
		}
		return
	}
	text := u.Content.Text
	switch u.Content.Type {
	case "text":
	case "resource_link":
		text = "[" + u.Content.Name + "](" + u.Content.URI + ")"
	default:
		text = "[" + u.Content.Type + "]"
	}
	if kind == "user" {
		if n := len(m.live); n == 0 || !isOpenText(m.live[n-1], "user") {
			m.closeText()
			m.drain()
			m.printLines("")
		}
	}
	m.addText(kind, text)
}

// applySetting handles the updates that change the session's state: the
// plan, usage, title, mode, config options and commands.
func (m *model) applySetting(kind string, raw json.RawMessage) {
	switch kind {
	case "plan":
		var u acp.PlanUpdate
		if json.Unmarshal(raw, &u) == nil {
			m.plan = u.Entries
		}
	case "usage_update":
		var u acp.UsageUpdate
		if json.Unmarshal(raw, &u) == nil {
			m.st.used, m.st.size, m.st.cost = u.Used, u.Size, u.Cost
		}
	case "session_info_update":
		var u acp.SessionInfoUpdate
		if json.Unmarshal(raw, &u) == nil && u.Title != "" {
			m.st.title = u.Title
		}
	case "current_mode_update":
		var u acp.CurrentModeUpdate
		if json.Unmarshal(raw, &u) == nil && m.modes != nil {
			m.modes.CurrentModeID = u.CurrentModeID
			m.syncStatus()
		}
	case "config_option_update":
		var u acp.ConfigOptionUpdate
		if json.Unmarshal(raw, &u) == nil {
			m.config = u.ConfigOptions
			m.syncStatus()
		}
	case "available_commands_update":
		var u acp.AvailableCommandsUpdate
		if json.Unmarshal(raw, &u) == nil {
			m.commands = u.AvailableCommands
		}
	}
}

func isOpenText(b block, kind string) bool {
	t, ok := b.(*textBlock)
	return ok && t.kind == kind && !t.closed
}
