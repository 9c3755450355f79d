package tui

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Team members and workers (sub-agents, CodeBuddy teams, multitask
// workers) stream into their parent session's updates, each tagged with
// corvid's own _meta["corvid.dev/subagent"] ({id, name, parentToolCallId,
// depth[, background]}, sent in every dialect; docs/subagents.md). Their
// text is kept apart from the main answer: every line is printed
// behind its member's label as soon as it is complete (members stream at
// the same time, so their lines interleave, each labelled), the unfinished
// tail of each drawn live. Their tool cards carry the label in the title;
// their plans, usage and titles are not the session's and are ignored.

// memberMeta is the _meta key that tags a member's update.
const memberMeta = "corvid.dev/subagent"

// memberOf is the member an update comes from, or "", and the tool call
// that started it, if told. meta is the update's _meta, kept raw by
// applyUpdate's one pass: an update without the tag (most chunks) costs
// nothing more.
func memberOf(meta json.RawMessage) (name, parent string) {
	if len(meta) == 0 || !bytes.Contains(meta, []byte(memberMeta)) {
		return "", ""
	}
	var h struct {
		Sub *struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Parent string `json:"parentToolCallId"`
		} `json:"corvid.dev/subagent"`
	}
	if json.Unmarshal(meta, &h) != nil || h.Sub == nil {
		return "", ""
	}
	name = strings.TrimSpace(h.Sub.Name)
	if name == "" {
		name = strings.TrimSpace(h.Sub.ID)
	}
	return name, h.Sub.Parent
}

// memberText is one member's stream of one kind (message or thought).
type memberText struct {
	name, kind string
	parent     string // the tool call that started the member
	md         markdown
	// tail is the unfinished line, appended in place like a textBlock's.
	tail []byte
}

// addMemberText appends a member's streamed text; each completed line is
// printed with the member's label.
func (m *model) addMemberText(name, parent, kind, text string) {
	key := kind + "\x00" + name
	b := m.memberTexts[key]
	if b == nil {
		if m.memberTexts == nil {
			m.memberTexts = map[string]*memberText{}
		}
		b = &memberText{name: name, kind: kind, parent: parent, md: markdown{th: m.th}}
		m.memberTexts[key] = b
		m.memberOrder = append(m.memberOrder, key)
	}
	// Only the new text can hold a newline: the tail had none.
	from := len(b.tail)
	b.tail = append(b.tail, text...)
	for {
		i := bytes.IndexByte(b.tail[from:], '\n')
		if i < 0 && len(b.tail) <= maxTail {
			return
		}
		next := 0
		if i < 0 {
			i = maxTail
			for i > 0 && !utf8.RuneStart(b.tail[i]) {
				i--
			}
		} else {
			i += from
			next = 1
		}
		m.printMemberLine(b, &b.md, string(b.tail[:i]))
		b.tail, from = b.tail[i+next:], 0
	}
}

func (m *model) printMemberLine(b *memberText, md *markdown, line string) {
	if b.kind == "thought" && !m.thoughts.open {
		return // a member's thoughts show only live, unless thoughts are expanded
	}
	m.printQ = append(m.printQ, m.memberLines(b, md, line)...)
}

// memberLines renders one line of a member's text behind its label.
func (m *model) memberLines(b *memberText, md *markdown, line string) []string {
	line = strings.TrimRight(line, "\r")
	label := m.memberLabel(b.name)
	w := m.width - ansi.StringWidth(label)
	var lines []string
	if b.kind == "thought" {
		lines = wrapStyled(m.th.thought.Render(line), w, "", "")
	} else {
		lines = md.line(line, w)
	}
	for i := range lines {
		lines[i] = label + lines[i]
	}
	return lines
}

// memberLabel is a member's name in its colour and a bar: "alice │ ".
func (m *model) memberLabel(name string) string {
	name = ansi.Truncate(name, min(12, max(m.width/4, 4)), "…")
	st := m.th.accent
	if m.th.color {
		palette := []string{"#0969DA", "#8250DF", "#1A7F37", "#BF3989", "#9A6700", "#0550AE"}
		darkPalette := []string{"#58A6FF", "#BC8CFF", "#3FB950", "#FF80C8", "#D29922", "#79C0FF"}
		h := fnv.New32a()
		_, _ = h.Write([]byte(name))
		i := int(h.Sum32() % uint32(len(palette)))
		c := palette[i]
		if m.th.dark {
			c = darkPalette[i]
		}
		st = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color(c))
	}
	return st.Render(name) + m.th.dim.Render(" │ ")
}

// liveMembers draws the members' unfinished lines.
func (m *model) liveMembers() []string {
	var out []string
	for _, key := range m.memberOrder {
		b := m.memberTexts[key]
		if len(b.tail) == 0 {
			continue
		}
		md := b.md
		out = append(out, m.memberLines(b, &md, string(b.tail))...)
	}
	return out
}

// closeMembers prints the members' unfinished lines: all of them when
// the turn ended (parent ""), else those of the members the finished tool
// call parent started.
func (m *model) closeMembers(parent string) {
	keep := m.memberOrder[:0]
	for _, key := range m.memberOrder {
		b := m.memberTexts[key]
		if parent != "" && b.parent != parent {
			keep = append(keep, key)
			continue
		}
		if len(b.tail) > 0 {
			m.printMemberLine(b, &b.md, string(b.tail))
		}
		delete(m.memberTexts, key)
	}
	m.memberOrder = keep
}

// memberTitle labels a member's tool call "[name] title", unless the
// agent did already.
func memberTitle(member, title string) string {
	if member == "" || strings.HasPrefix(title, "["+member+"]") {
		return title
	}
	return "[" + member + "] " + title
}
