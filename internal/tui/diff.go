package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// maxDiffLines bounds the lines of one diff shown in a card or a question;
// the rest is counted, not shown.
const maxDiffLines = 40

// renderDiff shows the change from old to new as one unified hunk: the
// common head and tail are trimmed (with up to 2 lines of context kept) and
// what lies between is shown removed, then added. It is exact for the one
// contiguous edit the edit tools make; scattered edits show as one hunk.
func renderDiff(th *theme, path string, oldText *string, newText string, width int) []string {
	var a []string
	if oldText != nil && *oldText != "" {
		a = splitLines(*oldText)
	}
	b := splitLines(newText)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	const ctx = 2
	start := max(0, pre-ctx)
	endA, endB := min(len(a), len(a)-suf+ctx), min(len(b), len(b)-suf+ctx)
	var out []string
	header := "+++ " + path
	if oldText == nil {
		header += " (new)"
	}
	out = append(out, th.bold.Render(ansi.Truncate(header, width, "…")))
	if pre == len(a) && pre == len(b) {
		return append(out, th.dim.Render("  (no change)"))
	}
	out = append(out, th.hunk.Render(fmt.Sprintf("@@ -%s +%s @@", hunkRange(start, endA-start), hunkRange(start, endB-start))))
	var body []string
	for i := start; i < pre; i++ {
		body = append(body, diffLine(th, ' ', a[i], width))
	}
	for i := pre; i < len(a)-suf; i++ {
		body = append(body, diffLine(th, '-', a[i], width))
	}
	for i := pre; i < len(b)-suf; i++ {
		body = append(body, diffLine(th, '+', b[i], width))
	}
	for i := len(b) - suf; i < endB; i++ {
		body = append(body, diffLine(th, ' ', b[i], width))
	}
	if len(body) > maxDiffLines {
		more := len(body) - maxDiffLines
		body = append(body[:maxDiffLines], th.dim.Render(fmt.Sprintf("… %d more lines", more)))
	}
	return append(out, body...)
}

func diffLine(th *theme, sign byte, text string, width int) string {
	text = strings.ReplaceAll(text, "\t", "    ")
	line := ansi.Truncate(string(sign)+text, max(width, 4), "…")
	switch sign {
	case '+':
		return th.add.Render(line)
	case '-':
		return th.del.Render(line)
	}
	return th.dim.Render(line)
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// hunkRange is a unified diff range: an empty one names the line before.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
