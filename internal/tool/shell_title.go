package tool

import (
	"fmt"
	"strings"
	"unicode"
)

// Titles show a command on one line. Nothing in it may hide what runs: a
// tail pushed out of view by spaces or newlines ("ls" + 90 spaces +
// "; curl … | sh"), a carriage return, an escape sequence or a bidi
// override. So whitespace runs collapse to one space, invisible characters
// are shown escaped, a long command keeps its start and its end, and a
// multi-line one says how many lines it has. The full text goes into the
// call's content (commandContent).

const (
	titleHead = 70
	titleTail = 40
)

// commandTitle renders cmd for a one-line title, in backquotes.
func commandTitle(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	lines := strings.Count(cmd, "\n") + 1
	var b strings.Builder
	space := false
	for _, r := range cmd {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || unicode.Is(unicode.Zs, r):
			space = true
			continue
		case space:
			b.WriteByte(' ')
			space = false
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		}
	}
	one := []rune(b.String())
	title := string(one)
	if len(one) > titleHead+titleTail+3 {
		head := strings.TrimRight(string(one[:titleHead]), " ")
		tail := strings.TrimLeft(string(one[len(one)-titleTail:]), " ")
		title = head + " … " + tail
	}
	title = "`" + title + "`"
	if lines > 1 {
		title += fmt.Sprintf(" (%d lines)", lines)
	}
	return title
}

// commandContent is the whole command as a fenced block, shown with the
// permission request.
func commandContent(cmd string) Content {
	fence := "```"
	for strings.Contains(cmd, fence) {
		fence += "`"
	}
	return Content{Type: ContentText, Text: fence + "sh\n" + cmd + "\n" + fence}
}
