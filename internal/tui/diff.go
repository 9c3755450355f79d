package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// maxDiffLines bounds the lines of one diff shown in a card or a question;
// the rest is counted, not shown.
const maxDiffLines = 40

// splitDiffWidth is the width from which a diff is drawn side by side:
// the old lines on the left, the new on the right.
const splitDiffWidth = 120

// renderDiff shows the change from old to new as one unified hunk: the
// common head and tail are trimmed (with up to 2 lines of context kept) and
// what lies between is diffed line by line. Scattered edits show as one
// hunk, their unchanged lines between them as context.
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
	var ops []lineOp
	for i := start; i < pre; i++ {
		ops = append(ops, lineOp{' ', a[i]})
	}
	ops = append(ops, lineOps(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for i := len(b) - suf; i < endB; i++ {
		ops = append(ops, lineOp{' ', b[i]})
	}
	var body []string
	if width >= splitDiffWidth {
		body = splitRows(th, ops, start+1, width)
	} else {
		for _, op := range ops {
			body = append(body, diffLine(th, op.sign, op.text, width))
		}
	}
	if len(body) > maxDiffLines {
		more := len(body) - maxDiffLines
		body = append(body[:maxDiffLines], th.dim.Render(fmt.Sprintf("… %d more lines", more)))
	}
	return append(out, body...)
}

// splitRows lays ops out side by side: a context line on both sides, a
// run of removals beside the run of additions that follows it.
// Each side numbers its lines from first.
func splitRows(th *theme, ops []lineOp, first, width int) []string {
	col := (width - 3) / 2
	sep := th.dim.Render(" │ ")
	oldN, newN := first, first
	cell := func(op *lineOp, n *int) string {
		if op == nil {
			return strings.Repeat(" ", col)
		}
		num := th.dim.Render(fmt.Sprintf("%4d ", *n))
		*n++
		l := num + diffLine(th, op.sign, op.text, col-5)
		return l + strings.Repeat(" ", max(0, col-ansi.StringWidth(l)))
	}
	var rows []string
	for i := 0; i < len(ops); {
		if ops[i].sign == ' ' {
			rows = append(rows, cell(&ops[i], &oldN)+sep+strings.TrimRight(cell(&ops[i], &newN), " "))
			i++
			continue
		}
		var dels, adds []*lineOp
		for ; i < len(ops) && ops[i].sign == '-'; i++ {
			dels = append(dels, &ops[i])
		}
		for ; i < len(ops) && ops[i].sign == '+'; i++ {
			adds = append(adds, &ops[i])
		}
		for j := 0; j < max(len(dels), len(adds)); j++ {
			var l, r *lineOp
			if j < len(dels) {
				l = dels[j]
			}
			if j < len(adds) {
				r = adds[j]
			}
			rows = append(rows, strings.TrimRight(cell(l, &oldN)+sep+cell(r, &newN), " "))
		}
	}
	return rows
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

type lineOp struct {
	sign byte // ' ', '-' or '+'
	text string
}

// maxLCSCells bounds the table of lineOps; a bigger change is shown as all
// of a removed, then all of b added.
const maxLCSCells = 1 << 20

// lineOps is a shortest edit from a to b by longest common subsequence.
func lineOps(a, b []string) []lineOp {
	var ops []lineOp
	if len(a)*len(b) > maxLCSCells || len(a) == 0 || len(b) == 0 {
		for _, l := range a {
			ops = append(ops, lineOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, lineOp{'+', l})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, lineOp{' ', a[i]})
			i++
			j++
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			ops = append(ops, lineOp{'-', a[i]})
			i++
		default:
			ops = append(ops, lineOp{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		ops = append(ops, lineOp{'-', a[i]})
	}
	for ; j < len(b); j++ {
		ops = append(ops, lineOp{'+', b[j]})
	}
	return ops
}
