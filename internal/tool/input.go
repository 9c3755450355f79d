package tool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// decodeInput unmarshals a call's input; a malformed input is a Result the
// model can act on.
func decodeInput(name string, raw json.RawMessage, v any) *Result {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		r := ErrorResult(fmt.Sprintf("invalid input for %s: %v", name, err))
		return &r
	}
	return nil
}

// looseDecode is decodeInput for Describe, which must render something even
// for bad input.
func looseDecode(raw json.RawMessage, v any) { _ = json.Unmarshal(raw, v) }

// diffContent is what the user sees for a file change; old nil means the
// file is new.
func diffContent(path string, old *string, new string) Content {
	return Content{Type: ContentDiff, Path: path, OldText: old, NewText: new}
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// quoteCommand renders a command for a one-line title.
func quoteCommand(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if i := strings.IndexByte(cmd, '\n'); i >= 0 {
		cmd = cmd[:i] + " …"
	}
	return "`" + shorten(cmd, 80) + "`"
}
