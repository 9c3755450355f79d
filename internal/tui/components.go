package tui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/corvid-agent/corvid/internal/acp"
)

// toolCall is what the TUI knows of one tool call: the tool_call and the
// tool_call_updates after it, merged.
type toolCall struct {
	id, title, kind, status string
	locations               []acp.ToolCallLocation
	content                 []acp.ToolCallContent
	rawInput                json.RawMessage
	gap                     bool   // drawn after a blank line
	cwd                     string // the session's directory: paths under it are shown relative
	member                  string // the team member that runs it (member.go), or ""
}

func (c *toolCall) apply(u acp.ToolCallUpdate) {
	if u.Title != "" {
		c.title = u.Title
	}
	if u.Kind != "" {
		c.kind = u.Kind
	}
	if u.Status != "" {
		c.status = u.Status
	}
	if u.Locations != nil {
		c.locations = u.Locations
	}
	if u.Content != nil {
		c.content = u.Content
	}
	if len(u.RawInput) > 0 {
		c.rawInput = u.RawInput
	}
}

func (c *toolCall) finished() bool { return c.status == "completed" || c.status == "failed" }

// maxOutputLines is the tail of a tool's text output kept in its card.
const maxOutputLines = 6

// renderToolCard draws a compact card: status glyph, kind, title; the
// locations; a diff per edit; the tail of the text output.
func renderToolCard(th *theme, c *toolCall, width int) []string {
	glyph := th.dim.Render("○")
	switch c.status {
	case "in_progress":
		glyph = th.warn.Render("◐")
	case "completed":
		glyph = th.ok.Render("✓")
	case "failed":
		glyph = th.fail.Render("✗")
	}
	kind := c.kind
	if kind == "" {
		kind = "tool"
	}
	head := glyph + " " + th.accent.Render(kind) + " " + ansi.Truncate(oneLine(memberTitle(c.member, c.title)), max(width-ansi.StringWidth(kind)-3, 4), "…")
	out := []string{head}
	if loc := locationsText(c.locations, c.cwd); loc != "" {
		out = append(out, th.dim.Render(ansi.Truncate("  "+loc, width, "…")))
	}
	if cmd := commandOf(c.rawInput); cmd != "" && c.kind == "execute" {
		out = append(out, th.dim.Render(ansi.Truncate("  $ "+oneLine(cmd), width, "…")))
	}
	for _, ct := range c.content {
		switch ct.Type {
		case "diff":
			for _, l := range renderDiff(th, relPath(ct.Path, c.cwd), ct.OldText, ct.NewText, width-2) {
				out = append(out, "  "+l)
			}
		case "content":
			if ct.Content == nil || ct.Content.Type != "text" {
				break
			}
			if c.kind == "execute" && c.finished() {
				out = append(out, outputSummary(th, outputLines(ct.Content.Text), width))
			} else {
				out = append(out, tailLines(th, ct.Content.Text, width)...)
			}
		case "terminal":
			out = append(out, th.dim.Render("  terminal "+ct.TerminalID))
		}
	}
	return out
}

func tailLines(th *theme, text string, width int) []string {
	var lines []string
	for _, l := range splitLines(strings.ReplaceAll(text, "\t", "    ")) {
		if !strings.HasPrefix(l, "```") { // a tool's fenced output: the card is the fence
			lines = append(lines, l)
		}
	}
	var out []string
	if len(lines) > maxOutputLines {
		out = append(out, th.dim.Render(fmt.Sprintf("  … %d lines above", len(lines)-maxOutputLines)))
		lines = lines[len(lines)-maxOutputLines:]
	}
	for _, l := range lines {
		out = append(out, th.dim.Render(ansi.Truncate("  "+ansi.Strip(l), width, "…")))
	}
	return out
}

func locationsText(locs []acp.ToolCallLocation, cwd string) string {
	var parts []string
	for _, l := range locs {
		p := relPath(l.Path, cwd)
		if l.Line != nil {
			p += fmt.Sprintf(":%d", *l.Line)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// relPath shows a path under cwd relative to it.
func relPath(p, cwd string) string {
	if cwd == "" || !filepath.IsAbs(p) {
		return p
	}
	if r, err := filepath.Rel(cwd, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return r
	}
	return p
}

func commandOf(raw json.RawMessage) string {
	var in struct {
		Command any `json:"command"`
	}
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	switch v := in.Command.(type) {
	case string:
		return v
	case []any:
		var s []string
		for _, a := range v {
			s = append(s, fmt.Sprint(a))
		}
		return strings.Join(s, " ")
	}
	return ""
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// renderPlan draws the plan as a checklist.
func renderPlan(th *theme, entries []acp.PlanEntry, width int) []string {
	out := []string{th.bold.Render("Plan")}
	for _, e := range entries {
		var box string
		text := e.Content
		switch e.Status {
		case "completed":
			box = th.ok.Render("☑")
		case "in_progress":
			box = th.warn.Render("◐")
		default:
			box = th.dim.Render("☐")
		}
		lines := wrapStyled(text, width, " "+box+" ", "   ")
		if e.Status == "completed" {
			for i := range lines {
				lines[i] = th.dim.Render(lines[i])
			}
		}
		out = append(out, lines...)
	}
	return out
}

// optionKey is the letter that picks a permission option of this kind.
func optionKey(kind string) string {
	switch kind {
	case "allow_once":
		return "y"
	case "allow_always":
		return "a"
	case "reject_once":
		return "n"
	case "reject_always":
		return "r"
	}
	return ""
}

// renderPermission draws a permission question: the tool, what it touches
// (a diff for an edit, the command for a shell), and every option with its
// keys, the selected one marked.
func renderPermission(th *theme, req *acp.RequestPermissionRequest, selected, width int, cwd string) []string {
	c := &toolCall{cwd: cwd}
	c.apply(req.ToolCall)
	kind := c.kind
	if kind == "" {
		kind = "tool"
	}
	out := []string{th.warn.Render("?") + " " + th.bold.Render("Allow ") + th.accent.Render(kind) + " " +
		ansi.Truncate(oneLine(c.title), max(width-ansi.StringWidth(kind)-9, 4), "…")}
	if loc := locationsText(c.locations, c.cwd); loc != "" {
		out = append(out, th.dim.Render(ansi.Truncate("  "+loc, width, "…")))
	}
	if cmd := commandOf(c.rawInput); cmd != "" {
		for _, l := range wrapStyled(cmd, width, "  $ ", "    ") {
			out = append(out, th.bold.Render(l))
		}
	}
	for _, ct := range c.content {
		if ct.Type == "diff" {
			for _, l := range renderDiff(th, relPath(ct.Path, c.cwd), ct.OldText, ct.NewText, width-2) {
				out = append(out, "  "+l)
			}
		}
	}
	for i, o := range req.Options {
		mark := "  "
		if i == selected {
			mark = th.accent.Render("› ")
		}
		keys := fmt.Sprintf("%d", i+1)
		if k := optionKey(o.Kind); k != "" {
			keys = k + "/" + keys
		}
		name := o.Name
		if i == selected {
			name = th.bold.Render(name)
		}
		out = append(out, ansi.Truncate(mark+th.key.Render("["+keys+"]")+" "+name, width, "…"))
	}
	out = append(out, th.dim.Render(ansi.Truncate("  ↑/↓ Enter · Esc cancels the turn", width, "…")))
	return out
}

// status is what the status line shows.
type status struct {
	model, mode, title string
	used, size         int64
	cost               *acp.Cost
	working            bool
	note               string
	// endpoint is the daemon attached to (--connect), shown last.
	endpoint string
}

// statusMemo is the status line as last drawn and what it was drawn for:
// a frame draws it again only when that changed (issue 36: lipgloss's
// rendering of it at every frame of a streamed answer).
type statusMemo struct {
	th    *theme
	s     status
	cost  acp.Cost // *s.cost when drawn
	width int
	line  string
	drawn bool
}

// render is renderStatus(th, s, width), drawn again only when one of them
// changed since the last call.
func (c *statusMemo) render(th *theme, s status, width int) string {
	if c.drawn && c.th == th && c.s == s && c.width == width && (s.cost == nil || *s.cost == c.cost) {
		return c.line
	}
	*c = statusMemo{th: th, s: s, width: width, line: renderStatus(th, s, width), drawn: true}
	if s.cost != nil {
		c.cost = *s.cost
	}
	return c.line
}

// renderStatus draws the one status line, cut to width.
func renderStatus(th *theme, s status, width int) string {
	var parts []string
	if s.working {
		hint := ""
		if width >= 100 {
			hint = th.dim.Render(" (Esc cancels)")
		}
		parts = append(parts, th.warn.Render("● working")+hint)
	}
	if s.note != "" {
		parts = append(parts, th.warn.Render(s.note))
	}
	if s.endpoint != "" {
		parts = append(parts, th.dim.Render("⇄ "+s.endpoint))
	}
	if s.model != "" {
		parts = append(parts, s.model)
	}
	if s.mode != "" {
		parts = append(parts, "mode "+s.mode)
	}
	if s.size > 0 {
		left := 100 - s.used*100/s.size
		parts = append(parts, fmt.Sprintf("%s/%s ctx (%d%% left)", short(s.used), short(s.size), left))
	} else if s.used > 0 {
		parts = append(parts, short(s.used)+" ctx")
	}
	if s.cost != nil {
		parts = append(parts, fmt.Sprintf("%s%.4f", currency(s.cost.Currency), s.cost.Amount))
	}
	if s.title != "" {
		parts = append(parts, th.bold.Render(s.title))
	}
	line := strings.Join(parts, th.dim.Render(" · "))
	return ansi.Truncate(line, width, "…")
}

func short(n int64) string {
	switch {
	case n >= 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}

func currency(c string) string {
	if c == "USD" || c == "" {
		return "$"
	}
	return c + " "
}
