package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// A shell call's output (kind execute) is drawn in its card as it comes
// (the agent streams it as tool_call_update text), its last
// maxOutputLines kept; when the call ends, the card goes to the scrollback
// with the output collapsed to one summary line. Ctrl+O prints the last
// finished call's output in full.

// outputLines are the lines of a tool's text output, without the fence
// a tool wraps it in (the card is the fence).
func outputLines(text string) []string {
	var lines []string
	for _, l := range splitLines(strings.ReplaceAll(text, "\t", "    ")) {
		if !strings.HasPrefix(l, "```") {
			lines = append(lines, ansi.Strip(l))
		}
	}
	return lines
}

// outputSummary is the one line a finished shell call's output leaves in
// its card: how many lines, and the last (with the line before it when
// the last is the exit status).
func outputSummary(th *theme, lines []string, width int) string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return th.dim.Render("  └ no output")
	}
	last := strings.TrimSpace(lines[len(lines)-1])
	n := len(lines)
	if strings.HasPrefix(last, "[") && strings.HasSuffix(last, "]") {
		n-- // the status line the agent adds is not output
		if len(lines) > 1 {
			last = strings.TrimSpace(lines[len(lines)-2]) + "  " + last
		}
	}
	head := fmt.Sprintf("  └ %d lines: ", n)
	if n == 1 {
		head = "  └ "
	}
	return th.dim.Render(ansi.Truncate(head+last, width, "…"))
}

// outputText is a card's text output, or "".
func (c *toolCall) outputText() string {
	var b strings.Builder
	for _, ct := range c.content {
		if ct.Type == "content" && ct.Content != nil && ct.Content.Type == "text" {
			b.WriteString(ct.Content.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// keepOutput remembers a finished shell call's output for Ctrl+O.
func (m *model) keepOutput(c *toolCall) {
	if c.kind == "execute" {
		if lines := outputLines(c.outputText()); len(lines) > 0 {
			title := commandOf(c.rawInput)
			if title == "" {
				title = c.title
			}
			m.lastOutput = &shownOutput{title: title, lines: lines}
		}
	}
}

type shownOutput struct {
	title string
	lines []string
}

// showOutput prints the last finished shell call's output in full (Ctrl+O).
func (m *model) showOutput() {
	o := m.lastOutput
	if o == nil {
		return
	}
	m.printLines(m.th.dim.Render(ansi.Truncate("$ "+oneLine(o.title), m.width, "…")))
	for _, l := range o.lines {
		m.printLines(wrapStyled(m.th.dim.Render(l), m.width, "  ", "  ")...)
	}
	m.lastOutput = nil
}
