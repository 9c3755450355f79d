package tool

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// What a permission question and a tool_call show for a file change. The
// rules: nothing is read from a file outside the session roots before the
// user approves (its path and size are shown, not its content); no preview
// holds more than maxPreviewBytes of text; no special file is opened.

// previewOld reads the current text of p for a preview: nil, "" when the
// file does not exist; a note instead of text when it is outside the roots,
// special, binary or too large to show.
func previewOld(ctx context.Context, env *Env, p string) (old *string, note string) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, ""
	}
	switch {
	case st.IsDir():
		return nil, fmt.Sprintf("%s is a directory.", p)
	case !st.Mode().IsRegular():
		return nil, (&NotRegularError{Path: p, Mode: st.Mode()}).Error() + "."
	case !env.InRoots(p):
		return nil, fmt.Sprintf("%s is outside the workspace (%s); its current content is not shown.", p, byteSize(st.Size()))
	case st.Size() > maxTextFile:
		return nil, fmt.Sprintf("%s is %s; its current content is not shown.", p, byteSize(st.Size()))
	}
	s, err := env.fs().ReadTextFile(ctx, p)
	if err != nil {
		return nil, fmt.Sprintf("%s cannot be read: %v.", p, err)
	}
	if !isText([]byte(s[:min(len(s), 8192)])) {
		return nil, fmt.Sprintf("%s is a binary file (%s); its content is not shown.", p, byteSize(int64(len(s))))
	}
	return &s, ""
}

// changeContent is the preview of replacing old (nil: a new file) with
// new in p: the whole diff when it is small, else the changed region with a
// few lines of context, each side capped, and a note saying so.
func changeContent(p string, old *string, new string) []Content {
	oldLen := 0
	if old != nil {
		oldLen = len(*old)
	}
	if oldLen+len(new) <= maxPreviewBytes {
		return []Content{diffContent(p, old, new)}
	}
	if old == nil {
		return []Content{
			{Type: ContentText, Text: fmt.Sprintf("New file %s (%s); showing its start.", p, byteSize(int64(len(new))))},
			diffContent(p, nil, capTail(new, maxPreviewBytes)),
		}
	}
	o, n, line := changedRegion(*old, new, 3)
	o, n = capTail(o, maxPreviewBytes/2), capTail(n, maxPreviewBytes/2)
	return []Content{
		{Type: ContentText, Text: fmt.Sprintf("%s is too large to show whole (%s before, %s after); showing the changed lines from line %d.",
			p, byteSize(int64(oldLen)), byteSize(int64(len(new))), line)},
		diffContent(p, &o, n),
	}
}

// changedRegion trims the common prefix and suffix of a and b to whole
// lines, keeping ctx lines of context, and returns what remains of each and
// the 1-based line where it starts.
func changedRegion(a, b string, ctx int) (string, string, int) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	start := strings.LastIndexByte(a[:pre], '\n') + 1
	for k := 0; k < ctx && start > 0; k++ {
		start = strings.LastIndexByte(a[:start-1], '\n') + 1
	}
	endA, endB := len(a)-suf, len(b)-suf
	for k := 0; k <= ctx; k++ { // to the end of the changed line, then ctx more
		i := strings.IndexByte(a[endA:], '\n')
		if i < 0 {
			endA, endB = len(a), len(b)
			break
		}
		endA += i + 1
		endB += i + 1
	}
	line := 1 + strings.Count(a[:start], "\n")
	return a[start:endA], b[start:endB], line
}

// capTail keeps the first n bytes of s (on a rune boundary) and says how
// many more there were.
func capTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… %d more bytes", len(s)-cut)
}

// noteContent is a one-line text content.
func noteContent(msg string) Content { return Content{Type: ContentText, Text: msg} }

// writeTargets are the targets of the paths a write touches, taken now.
func writeTargets(paths ...string) []Target {
	ts := make([]Target, len(paths))
	for i, p := range paths {
		ts[i] = targetOf(p)
	}
	return ts
}
