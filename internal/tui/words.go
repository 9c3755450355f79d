package tui

import (
	"net/url"
	"runtime"
	"strings"
	"unicode"
)

// promptWord is one word of a prompt as attachments reads it: name is
// the word with a shell's quoting taken off (what a terminal pastes for a
// dropped file: '/tmp/my shot.png', /tmp/my\ shot.png, a quote in a
// quoted name as quote, backslash-quote, quote, and file:///tmp/my%20shot.png),
// raw the word as typed.
type promptWord struct{ name, raw string }

// promptWords splits text into words the way a shell would for the
// quoting terminals paste, but without taking prose for quoting: a quote
// opens a quoted part only at a word's start (after an @ too) or right
// after another quoted or escaped part, so the apostrophe of "what's"
// is a letter; a word whose quoting does not close is taken as typed,
// up to the next space, with quotes trimmed from its ends (as before).
// Backslash escapes are read except on Windows, where \ separates a
// path's parts.
func promptWords(text string) []promptWord {
	rs := []rune(text)
	var out []promptWord
	for i := 0; i < len(rs); {
		if unicode.IsSpace(rs[i]) {
			i++
			continue
		}
		name, end, ok := shellWord(rs, i, runtime.GOOS != "windows")
		if !ok {
			end = i
			for end < len(rs) && !unicode.IsSpace(rs[end]) {
				end++
			}
			name = strings.Trim(string(rs[i:end]), `'"`)
		}
		raw := string(rs[i:end])
		if u, ok := fileURL(name); ok {
			name = u
		}
		out = append(out, promptWord{name: name, raw: raw})
		i = end
	}
	return out
}

// shellWord reads the word that starts at rs[i]: its text unquoted, where
// it ends, and false when a quote it opened does not close.
func shellWord(rs []rune, i int, escapes bool) (string, int, bool) {
	var b strings.Builder
	quotable := true // a quote here opens a quoted part
	start := i
	for i < len(rs) && !unicode.IsSpace(rs[i]) {
		r := rs[i]
		switch {
		case r == '\\' && escapes && i+1 < len(rs):
			b.WriteRune(rs[i+1])
			i += 2
			quotable = true
		case (r == '\'' || r == '"') && quotable:
			text, end, ok := quoted(rs, i, escapes)
			if !ok {
				return "", 0, false
			}
			b.WriteString(text)
			i = end
		default:
			b.WriteRune(r)
			i++
			quotable = r == '@' && i-1 == start
		}
	}
	return b.String(), i, true
}

// quoted reads the quoted part that opens at rs[i]: '…' takes everything
// as it is; "…" reads \" \\ \$ \` as the character escaped.
func quoted(rs []rune, i int, escapes bool) (string, int, bool) {
	q := rs[i]
	var b strings.Builder
	for j := i + 1; j < len(rs); j++ {
		switch {
		case rs[j] == q:
			return b.String(), j + 1, true
		case q == '"' && escapes && rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]):
			b.WriteRune(rs[j+1])
			j++
		default:
			b.WriteRune(rs[j])
		}
	}
	return "", 0, false
}

// fileURL reads a file:// URL (some terminals paste a dropped file so)
// as its path.
func fileURL(s string) (string, bool) {
	if !strings.HasPrefix(s, "file://") {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
		return "", false
	}
	return u.Path, true
}
