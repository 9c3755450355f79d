package agent

import (
	"github.com/corvid-agent/corvid/internal/tool"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// filePath extracts an absolute path from a file:// URI or a bare path.
func filePath(uri string) (string, bool) {
	if strings.HasPrefix(uri, "file://") {
		u, err := url.Parse(uri)
		if err != nil || u.Path == "" {
			return "", false
		}
		return filepath.Clean(u.Path), true
	}
	if filepath.IsAbs(uri) {
		return filepath.Clean(uri), true
	}
	return "", false
}

// shorten returns the first line of s, at most n runes.
func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func textContent(s string) tool.Content { return tool.Content{Type: tool.ContentText, Text: s} }
