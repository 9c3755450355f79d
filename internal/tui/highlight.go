package tui

import (
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
)

// The TUI's own syntax highlighter for fenced code blocks: a line-at-a-time
// tokenizer (keywords, types, strings, comments, numbers) for the common
// languages, so a block is highlighted as it streams. It links no lexer
// library: chroma's lexer and style registration at package init would
// cost every start of corvid-tui (ARCHITECTURE.md §6).

// langDef describes one language to the tokenizer.
type langDef struct {
	keywords    map[string]bool
	types       map[string]bool // builtin types and constants
	lineComment []string        // "//", "#", "--"
	hashComment bool            // # starts a comment only at a word's start (shells)
	block       [2]string       // block comment delimiters
	quotes      string          // one-line string quotes
	multi       []string        // strings that may span lines: ` """ '''
	keyColon    bool            // a word or string before ':' is a key (JSON, YAML, TOML '=')
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

const cLike = "break case continue default do else for goto if return switch while "

// langs is built on first use, not at package init: a start that shows
// no code block pays nothing for it.
var langs = sync.OnceValue(func() map[string]*langDef {
	return map[string]*langDef{
		"go": {keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var"),
			types:       words("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any true false nil iota"),
			lineComment: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: `"'`, multi: []string{"`"}},
		"python": {keywords: words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case"),
			types:       words("True False None int str float bool list dict set tuple bytes object self print len range"),
			lineComment: []string{"#"}, quotes: `"'`, multi: []string{`"""`, `'''`}},
		"javascript": {keywords: words("async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield type interface enum implements declare as"),
			types:       words("true false null undefined NaN Infinity string number boolean any unknown never void object Array Promise console"),
			lineComment: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: `"'`, multi: []string{"`"}},
		"rust": {keywords: words("as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while"),
			types:       words("bool char str String i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 Vec Option Result Some None Ok Err Box true false"),
			lineComment: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: `"`},
		"c": {keywords: words(cLike + "auto const enum extern inline register restrict sizeof static struct typedef union volatile class namespace template typename public private protected virtual override new delete using try catch throw this nullptr constexpr #include #define #if #ifdef #ifndef #endif #else #pragma"),
			types:       words("void char short int long float double signed unsigned bool size_t true false NULL auto std string vector"),
			lineComment: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: `"'`},
		"java": {keywords: words(cLike + "abstract assert catch class extends final finally implements import instanceof interface native new package private protected public static super synchronized this throw throws transient try var volatile record fun val when object"),
			types:       words("boolean byte char double float int long short void String Integer Object List Map true false null"),
			lineComment: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: `"'`, multi: []string{`"""`}},
		"sh": {keywords: words("if then else elif fi for while until do done case esac in function return exit export local readonly set unset shift source alias echo cd"),
			lineComment: []string{"#"}, hashComment: true, quotes: `"'`},
		"json": {types: words("true false null"), quotes: `"`, keyColon: true},
		"yaml": {types: words("true false null yes no on off"), lineComment: []string{"#"}, hashComment: true, quotes: `"'`, keyColon: true},
		"toml": {types: words("true false"), lineComment: []string{"#"}, quotes: `"'`, multi: []string{`"""`, `'''`}, keyColon: true},
		"sql": {keywords: words("select from where and or not insert into values update set delete create table drop alter index join left right inner outer on group by order having limit as distinct union primary key references null is in like begin commit SELECT FROM WHERE AND OR NOT INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER INDEX JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT AS DISTINCT UNION PRIMARY KEY REFERENCES NULL IS IN LIKE BEGIN COMMIT"),
			types:       words("int integer text varchar boolean real blob INT INTEGER TEXT VARCHAR BOOLEAN REAL BLOB"),
			lineComment: []string{"--"}, block: [2]string{"/*", "*/"}, quotes: `'"`},
	}
})

var langAliases = map[string]string{
	"golang": "go", "py": "python", "python3": "python", "js": "javascript", "jsx": "javascript",
	"ts": "javascript", "tsx": "javascript", "typescript": "javascript", "mjs": "javascript",
	"rs": "rust", "cpp": "c", "c++": "c", "cc": "c", "h": "c", "hpp": "c", "cs": "java", "csharp": "java",
	"kotlin": "java", "kt": "java", "bash": "sh", "shell": "sh", "zsh": "sh", "console": "sh",
	"yml": "yaml", "jsonc": "json",
}

// langFor is the definition of a fence's language, or nil.
func langFor(info string) *langDef {
	name := strings.ToLower(strings.Fields(info + " ")[0])
	if a, ok := langAliases[name]; ok {
		name = a
	}
	return langs()[name]
}

// highlighter colours the lines of one code block; it keeps what spans
// lines (an open block comment or multi-line string).
type highlighter struct {
	lang  *langDef
	open  string // the delimiter that closes an open comment or string
	inCom bool   // the open span is a comment
}

// token kinds
const (
	tkPlain = iota
	tkKeyword
	tkType
	tkString
	tkComment
	tkNumber
	tkKey
)

// line highlights one source line.
func (h *highlighter) line(th *theme, src string) string {
	var b strings.Builder
	emit := func(kind int, s string) {
		if s == "" {
			return
		}
		b.WriteString(th.tokenStyle(kind).Render(s))
	}
	l := h.lang
	i := 0
	if h.open != "" {
		kind := tkString
		if h.inCom {
			kind = tkComment
		}
		end := strings.Index(src, h.open)
		if end < 0 {
			emit(kind, src)
			return b.String()
		}
		end += len(h.open)
		emit(kind, src[:end])
		h.open, i = "", end
	}
	plain := i
	flush := func(to int) { emit(tkPlain, src[plain:to]) }
	for i < len(src) {
		rest := src[i:]
		if l.block[0] != "" && strings.HasPrefix(rest, l.block[0]) {
			flush(i)
			end := strings.Index(rest[len(l.block[0]):], l.block[1])
			if end < 0 {
				emit(tkComment, rest)
				h.open, h.inCom = l.block[1], true
				return b.String()
			}
			n := len(l.block[0]) + end + len(l.block[1])
			emit(tkComment, rest[:n])
			i += n
			plain = i
			continue
		}
		if lineCommentAt(l, src, i) {
			flush(i)
			emit(tkComment, rest)
			return b.String()
		}
		if d := multiAt(l, rest); d != "" {
			flush(i)
			end := strings.Index(rest[len(d):], d)
			if end < 0 {
				emit(tkString, rest)
				h.open, h.inCom = d, false
				return b.String()
			}
			n := len(d) + end + len(d)
			emit(tkString, rest[:n])
			i += n
			plain = i
			continue
		}
		kind, n := l.token(src, i)
		if kind != tkPlain {
			flush(i)
			emit(kind, rest[:n])
			plain = i + n
		}
		i += n
	}
	flush(len(src))
	return b.String()
}

// token is the kind and length of the string, number or word at src[i]
// (tkPlain for one that is not highlighted, and for any other byte).
func (l *langDef) token(src string, i int) (kind, n int) {
	rest := src[i:]
	c := src[i]
	switch {
	case strings.IndexByte(l.quotes, c) >= 0:
		n = quotedLen(rest)
		if l.keyColon && followedByColon(rest[n:]) {
			return tkKey, n
		}
		return tkString, n
	case c >= '0' && c <= '9' && (i == 0 || !isWordByte(src[i-1])):
		n = 1
		for n < len(rest) && (isWordByte(rest[n]) || rest[n] == '.') {
			n++
		}
		return tkNumber, n
	case isWordByte(c) || c == '#' && l.keywords != nil:
		n = 1
		for n < len(rest) && (isWordByte(rest[n]) || rest[n] == '-' && l.keyColon) {
			n++
		}
		w := rest[:n]
		switch {
		case l.keywords[w]:
			return tkKeyword, n
		case l.types[w]:
			return tkType, n
		case l.keyColon && followedByColon(rest[n:]):
			return tkKey, n
		}
		return tkPlain, n
	}
	return tkPlain, 1
}

func lineCommentAt(l *langDef, src string, i int) bool {
	for _, p := range l.lineComment {
		if strings.HasPrefix(src[i:], p) {
			if l.hashComment && i > 0 && src[i-1] != ' ' && src[i-1] != '\t' {
				return false
			}
			return true
		}
	}
	return false
}

func multiAt(l *langDef, rest string) string {
	for _, d := range l.multi {
		if strings.HasPrefix(rest, d) {
			return d
		}
	}
	return ""
}

// quotedLen is the length of the string literal at the start of s (to its
// closing quote, or the line's end).
func quotedLen(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i + 1
		}
	}
	return len(s)
}

func followedByColon(s string) bool {
	s = strings.TrimLeft(s, " \t")
	return strings.HasPrefix(s, ":") || strings.HasPrefix(s, "=")
}

// tokenStyle is the style of one kind of token.
func (t *theme) tokenStyle(kind int) lipgloss.Style {
	switch kind {
	case tkKeyword:
		return t.hlKeyword
	case tkType:
		return t.hlType
	case tkString:
		return t.hlString
	case tkComment:
		return t.hlComment
	case tkNumber:
		return t.hlNumber
	case tkKey:
		return t.hlKey
	}
	return t.hlPlain
}
