package tool

import (
	"bytes"
	"os"
	"strings"
)

// This file is corvid's gitignore matcher: git's rules from gitignore(5)
// and its wildmatch, checked against `git check-ignore` by
// TestGitignoreMatchesGit and FuzzGitignoreMatchesGit. It replaces go-git's
// matcher, whose package linked go-git's config parser (gcfg, warnings,
// encoding/gob) into every start of the binary.
//
// Sources read (see ancestorPatterns and walker.readDir): the .gitignore of
// every directory from the repository top down, $GIT_DIR/info/exclude and
// the global ignore file, core.excludesFile (gitconfig.go). Not read:
// core.ignoreCase (matching is case-sensitive, git's default on Linux), and
// .gitignore files that are symbolic links (git refuses them too).

// ignoreRule is one pattern line of an ignore file.
type ignoreRule struct {
	glob     string // without '!', the trailing '/' and, for a path rule, the leading '/'
	lit      string // a path rule's glob up to its first wildcard, compared as a string
	kind     uint8  // how glob matches: ruleGlob, ruleLiteral or ruleSuffix
	negate   bool   // "!pattern": a match re-includes
	dirOnly  bool   // "pattern/": matches directories only
	basename bool   // no '/' in the pattern: matched against the entry's name alone
	// baseLen is the length of "dir/", the ignore file's directory relative
	// to the top (0 at the top): a path rule matches the path below it.
	baseLen int
}

const (
	ruleGlob    = iota
	ruleLiteral // no wildcard or escape: compared as a string
	ruleSuffix  // a name rule "*literal": a suffix test
)

// parseIgnoreLine parses one line of an ignore file whose directory,
// relative to the top, is base ("" or "a/b/"). ok is false for a comment,
// a blank line and a pattern that can match nothing.
func parseIgnoreLine(line, base string) (r ignoreRule, ok bool) {
	if line == "" || line[0] == '#' {
		return r, false
	}
	p := trimTrailingSpaces(line)
	if p != "" && p[0] == '!' {
		r.negate = true
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly = true
		p = p[:len(p)-1]
	}
	if p == "" {
		return r, false
	}
	r.basename = !strings.Contains(p, "/")
	if !r.basename {
		// A path rule is anchored to the ignore file's directory whether
		// or not it starts with '/'; one leading '/' only says so.
		p = strings.TrimPrefix(p, "/")
		r.baseLen = len(base)
	}
	r.glob = p
	wild := strings.IndexAny(p, `*?[\`)
	switch {
	case wild < 0:
		r.kind = ruleLiteral
	case r.basename && p[0] == '*' && !strings.ContainsAny(p[1:], `*?[\`):
		r.kind = ruleSuffix
		r.glob = p[1:]
	case !r.basename:
		// git compares a path rule's literal start on its own and
		// wildmatches the rest as a pattern of its own, so a "**" just
		// after the literal start counts as at the start of a pattern:
		// "a**/b" matches "a/x/b" in git.
		r.lit, r.glob = p[:wild], p[wild:]
	}
	return r, true
}

// trimTrailingSpaces drops the spaces at the end of a pattern line unless
// a backslash escapes them ("a\ " keeps one). Tabs are not trimmed; a line
// ending in a lone backslash is kept as it is.
func trimTrailingSpaces(s string) string {
	cut := -1 // start of the run of trailing spaces
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if cut < 0 {
				cut = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			cut = -1
		default:
			cut = -1
		}
	}
	if cut >= 0 {
		return s[:cut]
	}
	return s
}

// match reports whether the rule's glob matches text: the entry's name for
// a name rule, its path below the rule's directory for a path rule.
func (r *ignoreRule) match(text string) bool {
	switch r.kind {
	case ruleLiteral:
		return text == r.glob
	case ruleSuffix:
		return strings.HasSuffix(text, r.glob)
	}
	if r.lit != "" {
		rest, ok := strings.CutPrefix(text, r.lit)
		return ok && wildmatch(r.glob, rest)
	}
	return wildmatch(r.glob, text)
}

// lastMatch applies gitignore precedence to one entry named name in the
// directory whose path from the top is dirPrefix ("" or "a/b/"): the last
// matching rule decides, and the rules of deeper ignore files come after
// those of shallower ones. It does not look at the entry's parents: the walk
// never enters an ignored directory, which is how git keeps a file below an
// excluded directory from being re-included.
func lastMatch(rules []ignoreRule, dirPrefix, name string, isDir bool) bool {
	path := ""
	for i := len(rules) - 1; i >= 0; i-- {
		r := &rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		var m bool
		switch dir := dirPrefix[r.baseLen:]; {
		case r.basename:
			m = r.match(name)
		case dir == "":
			m = r.match(name)
		case !r.mayMatchPath(dir, name):
		default:
			if path == "" {
				path = dirPrefix + name
			}
			m = r.match(path[r.baseLen:])
		}
		if m {
			return !r.negate
		}
	}
	return false
}

// mayMatchPath tells from the literal start of a path rule whether it may
// match the path dir+name, without building that path (most rules of the
// ancestors' ignore files are rejected here).
func (r *ignoreRule) mayMatchPath(dir, name string) bool {
	lit := r.lit
	if r.kind == ruleLiteral {
		if len(dir)+len(name) != len(r.glob) {
			return false
		}
		lit = r.glob
	}
	if len(lit) <= len(dir) {
		return strings.HasPrefix(dir, lit)
	}
	return strings.HasPrefix(lit, dir) && strings.HasPrefix(name, lit[len(dir):])
}

// appendIgnoreFile returns rules plus the patterns of file, an ignore file
// in the directory base ("" or "a/b/") relative to the top. It copies rules
// so that sibling directories never share a grown slice.
func appendIgnoreFile(rules []ignoreRule, file, base string) []ignoreRule {
	data, err := os.ReadFile(file)
	if err != nil {
		return rules
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	out := rules[:len(rules):len(rules)]
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if r, ok := parseIgnoreLine(string(line), base); ok {
			out = append(out, r)
		}
	}
	return out
}

// wildmatch reports whether text matches the glob p by git's wildmatch with
// WM_PATHNAME: '*', '?' and classes never match '/', "**" between slashes
// (or at either end) matches any number of directories, a backslash quotes
// the next byte. It works on bytes, as git does: '?' matches one byte of a
// multi-byte character.
func wildmatch(p, text string) bool {
	return wild(p, text) == wildMatch
}

// The results of wild. The two aborts cut the search short: wildAbortAll
// when no later split of the text can help (the text ran out, or the
// pattern is malformed), wildAbortStar when a single '*' would have to
// cross a '/' and only an enclosing "**" may try further.
const (
	wildMatch = iota
	wildNoMatch
	wildAbortAll
	wildAbortStar
)

func wild(p, t string) int {
	ti := 0
	for pi := 0; pi < len(p); pi, ti = pi+1, ti+1 {
		c := p[pi]
		if ti == len(t) && c != '*' {
			return wildAbortAll
		}
		switch c {
		case '\\':
			pi++
			if pi == len(p) || t[ti] != p[pi] {
				return wildNoMatch
			}
		case '?':
			if t[ti] == '/' {
				return wildNoMatch
			}
		case '[':
			end, r := wildClass(p, pi+1, t[ti])
			if r != wildMatch {
				return r
			}
			pi = end
		case '*':
			npi, nti, r, more := star(p, pi, t, ti)
			if !more {
				return r
			}
			pi, ti = npi, nti
		default:
			if t[ti] != c {
				return wildNoMatch
			}
		}
	}
	if ti < len(t) {
		return wildNoMatch
	}
	return wildMatch
}

// star matches the '*' (or run of them) at p[pi] against t[ti:]. It
// returns the result, or, with more, the positions the match goes on from
// (before wild's loop steps past them): a "*/" that took the rest of a
// component.
func star(p string, pi int, t string, ti int) (npi, nti, r int, more bool) {
	first := pi
	for pi+1 < len(p) && p[pi+1] == '*' {
		pi++
	}
	rest := p[pi+1:]
	crossSlash := false
	if pi > first && (first == 0 || p[first-1] == '/') &&
		(rest == "" || rest[0] == '/' || strings.HasPrefix(rest, `\/`)) {
		// "**" as a whole component: any number of directories,
		// none included ("a/**/b" matches "a/b").
		if rest != "" && rest[0] == '/' && wild(rest[1:], t[ti:]) == wildMatch {
			return 0, 0, wildMatch, false
		}
		crossSlash = true
	}
	if rest == "" {
		if !crossSlash && strings.IndexByte(t[ti:], '/') >= 0 {
			return 0, 0, wildNoMatch, false
		}
		return 0, 0, wildMatch, false
	}
	if !crossSlash && rest[0] == '/' {
		// "*/": the rest of this component, then the slash.
		j := strings.IndexByte(t[ti:], '/')
		if j < 0 {
			return 0, 0, wildNoMatch, false
		}
		return pi + 1, ti + j, 0, true
	}
	return 0, 0, wildStar(rest, t[ti:], crossSlash), false
}

// wildStar matches t against a '*' (crossing slashes when crossSlash)
// followed by the non-empty pattern rest.
func wildStar(rest, t string, crossSlash bool) int {
	lit := rest[0]
	special := lit == '*' || lit == '?' || lit == '[' || lit == '\\'
	for ti := 0; ti < len(t); ti++ {
		if !special {
			// What the star takes ends just before the next copy of
			// the literal that follows it.
			for ti < len(t) && t[ti] != lit && (crossSlash || t[ti] != '/') {
				ti++
			}
			if ti == len(t) || t[ti] != lit {
				return wildNoMatch
			}
		}
		switch r := wild(rest, t[ti:]); {
		case r == wildNoMatch:
			if !crossSlash && t[ti] == '/' {
				return wildAbortStar
			}
		case r == wildAbortStar && crossSlash:
		default:
			return r
		}
	}
	return wildAbortAll
}

// wildClass matches the byte c against the bracket expression whose body
// starts at p[i] (just after '['). It returns the index of the closing ']'
// and wildMatch, or wildNoMatch, or wildAbortAll for an unterminated
// bracket or an unknown [:class:].
func wildClass(p string, i int, c byte) (int, int) {
	if i == len(p) {
		return i, wildAbortAll
	}
	negated := p[i] == '!' || p[i] == '^'
	if negated {
		i++
	}
	matched := false
	var prev byte // the last single byte, which may start a range; 0 if none
	for first := true; ; first = false {
		if i == len(p) {
			return i, wildAbortAll
		}
		if p[i] == ']' && !first {
			break
		}
		end, b, in, r := classItem(p, i, prev, c)
		if r != wildMatch {
			return end, r
		}
		matched = matched || in
		prev, i = b, end+1
	}
	if matched == negated || c == '/' {
		return i, wildNoMatch
	}
	return i, wildMatch
}

// classItem reads the item of a bracket expression that starts at p[i]: a
// byte, an escaped byte, a range from prev, or a [:name:] class. It returns
// the index of the item's last byte, the byte a following '-' may start a
// range from (0 if none), whether c is in the item, and wildMatch, or
// wildAbortAll (with the index to report) for a malformed item.
func classItem(p string, i int, prev, c byte) (end int, b byte, in bool, r int) {
	b = p[i]
	switch {
	case b == '\\':
		i++
		if i == len(p) {
			return i, 0, false, wildAbortAll
		}
		return i, p[i], c == p[i], wildMatch
	case b == '-' && prev != 0 && i+1 < len(p) && p[i+1] != ']':
		i++
		hi := p[i]
		if hi == '\\' {
			i++
			if i == len(p) {
				return i, 0, false, wildAbortAll
			}
			hi = p[i]
		}
		return i, 0, prev <= c && c <= hi, wildMatch
	case b == '[' && i+1 < len(p) && p[i+1] == ':':
		end := strings.IndexByte(p[i+2:], ']')
		if end < 0 {
			return len(p), 0, false, wildAbortAll
		}
		end += i + 2
		if end-(i+2) < 1 || p[end-1] != ':' {
			// Not "[:name:]": a plain '['.
			return i, b, c == '[', wildMatch
		}
		in, known := charClass(p[i+2:end-1], c)
		if !known {
			return end, 0, false, wildAbortAll
		}
		return end, 0, in, wildMatch
	}
	return i, b, c == b, wildMatch
}

// charClass reports whether c is in the POSIX class name as git's
// wildmatch sees it: ASCII only (bytes above 0x7f are in no class), and
// git's [:space:] lacks '\v' and '\f'. known is false for an unknown name.
func charClass(name string, c byte) (in, known bool) {
	for _, cl := range charClasses {
		if cl.name == name {
			return cl.in(c), true
		}
	}
	return false, false
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isPrint(c byte) bool { return 0x20 <= c && c <= 0x7e }

// charClasses are the POSIX classes of git's wildmatch.
var charClasses = [...]struct {
	name string
	in   func(c byte) bool
}{
	{"alnum", func(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }},
	{"alpha", func(c byte) bool { return isLower(c) || isUpper(c) }},
	{"blank", func(c byte) bool { return c == ' ' || c == '\t' }},
	{"cntrl", func(c byte) bool { return c < 0x20 || c == 0x7f }},
	{"digit", isDigit},
	{"graph", func(c byte) bool { return isPrint(c) && c != ' ' }},
	{"lower", isLower},
	{"print", isPrint},
	{"punct", func(c byte) bool { return isPrint(c) && c != ' ' && !isLower(c) && !isUpper(c) && !isDigit(c) }},
	// git's own ctype: no vertical tab or form feed.
	{"space", func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }},
	{"upper", isUpper},
	{"xdigit", func(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }},
}
