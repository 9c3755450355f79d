package tool

import (
	"html"
	"net/url"
	"strings"
)

// htmlToMarkdown reduces an HTML document to readable text with light
// Markdown: headings, lists, links, code and paragraphs. Scripts, styles
// and other non-content elements are dropped.
//
// It reads the document as a stream of tags and text (htmlTokens) instead
// of building a tree: the output needs no more, and a full HTML parser
// would be linked and initialised on every start for the one tool that
// fetches pages. Entities are decoded by the standard library, whose
// tables are built on first use.
func htmlToMarkdown(doc string, base *url.URL) string {
	m := &mdWriter{base: base}
	tokenizeHTML(doc, m.token)
	m.closeCell()
	out := strings.TrimSpace(m.b.String())
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return squeezeBlankLines(strings.Join(lines, "\n")) + "\n"
}

// squeezeBlankLines turns every run of three or more newlines into two.
func squeezeBlankLines(s string) string {
	if !strings.Contains(s, "\n\n\n") {
		return s
	}
	var b strings.Builder
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			run++
			if run > 2 {
				continue
			}
		} else {
			run = 0
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// collapseSpace turns every run of HTML white space into one space.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n', '\f':
			if !space {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteByte(s[i])
			space = false
		}
	}
	return b.String()
}

// skippedElements hold no content worth reading.
var skippedElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true, "iframe": true,
	"head": true, "button": true, "select": true, "canvas": true, "object": true,
}

// headElements may appear in <head>; any other start tag ends it.
var headElements = map[string]bool{
	"title": true, "meta": true, "link": true, "style": true, "script": true, "base": true,
	"noscript": true, "template": true,
}

// blockElements are separated from what surrounds them by a blank line.
var blockElements = map[string]bool{
	"p": true, "div": true, "section": true, "article": true, "main": true, "header": true,
	"footer": true, "nav": true, "aside": true, "ul": true, "ol": true, "table": true,
	"blockquote": true, "form": true, "figure": true, "dl": true,
}

type mdWriter struct {
	b    strings.Builder
	base *url.URL
	pre  int // depth inside <pre>
	// skip names the element whose content is being dropped, depth how
	// many of it are open.
	skip      string
	skipDepth int
	links     []string // hrefs of the open <a> elements, "" for a plain one
	cell      bool     // a table cell is open
	afterPre  bool     // just after <pre>: a leading newline is not content
	headRaw   string   // the raw-text element open in <head>
}

func (m *mdWriter) block() {
	s := m.b.String()
	if s == "" || strings.HasSuffix(s, "\n\n") {
		return
	}
	if strings.HasSuffix(s, "\n") {
		m.b.WriteString("\n")
		return
	}
	m.b.WriteString("\n\n")
}

func (m *mdWriter) newline() {
	if s := m.b.String(); s != "" && !strings.HasSuffix(s, "\n") {
		m.b.WriteString("\n")
	}
}

// closeCell ends a table cell left open (HTML lets </td> be implied).
func (m *mdWriter) closeCell() {
	if m.cell {
		m.b.WriteString(" | ")
		m.cell = false
	}
}

func (m *mdWriter) token(t htmlToken) {
	afterPre := m.afterPre
	m.afterPre = false
	if m.skipping(t) {
		return
	}
	switch t.kind {
	case tokenText:
		m.text(t.data, afterPre)
	case tokenStart:
		m.start(t)
	case tokenEnd:
		m.end(t.name)
	}
}

// skipping reports whether t falls inside a dropped element, and starts
// or ends one.
func (m *mdWriter) skipping(t htmlToken) bool {
	switch m.skip {
	case "":
		if t.kind == tokenStart && skippedElements[t.name] && !t.selfClosing {
			m.skip, m.skipDepth = t.name, 1
			return true
		}
		return false
	case "head":
		return m.skippingHead(t)
	}
	switch {
	case t.kind == tokenStart && t.name == m.skip && !t.selfClosing:
		m.skipDepth++
	case t.kind == tokenEnd && t.name == m.skip:
		m.skipDepth--
		if m.skipDepth == 0 {
			m.skip = ""
		}
	}
	return true
}

// skippingHead is skipping inside <head>, which ends at </head>, <body>,
// or content that cannot be in it.
func (m *mdWriter) skippingHead(t htmlToken) bool {
	switch {
	case m.headRaw != "":
		// The text of a <title>, <style> or <script> in the head.
		if t.kind == tokenEnd && t.name == m.headRaw {
			m.headRaw = ""
		}
	case t.kind == tokenStart && rawTextElements[t.name] && headElements[t.name] && !t.selfClosing:
		m.headRaw = t.name
	case t.kind == tokenEnd && (t.name == "head" || t.name == "body" || t.name == "html"),
		t.kind == tokenStart && t.name == "body":
		m.skip = ""
		return true
	case t.kind == tokenStart && !headElements[t.name],
		t.kind == tokenText && strings.TrimLeft(t.data, " \t\r\n\f") != "":
		m.skip = ""
		return m.skipping(t)
	}
	return true
}

func (m *mdWriter) text(data string, afterPre bool) {
	if m.pre > 0 {
		if afterPre {
			data = strings.TrimPrefix(data, "\n")
		}
		m.b.WriteString(data)
		return
	}
	t := collapseSpace(data)
	if s := m.b.String(); t != "" && (s == "" || strings.HasSuffix(s, "\n") || strings.HasSuffix(s, " ")) {
		t = strings.TrimLeft(t, " ")
	}
	m.b.WriteString(t)
}

func (m *mdWriter) start(t htmlToken) {
	switch t.name {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		m.block()
		m.b.WriteString(strings.Repeat("#", int(t.name[1]-'0')) + " ")
	case "li":
		m.newline()
		m.b.WriteString("- ")
	case "dt", "dd":
		m.newline()
	case "tr":
		m.closeCell()
		m.newline()
	case "td", "th":
		m.closeCell()
		m.cell = true
	case "br":
		m.b.WriteString("\n")
	case "hr":
		m.block()
		m.b.WriteString("---")
		m.block()
	case "pre":
		m.block()
		m.b.WriteString("```\n")
		m.pre++
		m.afterPre = true
	case "code":
		if m.pre == 0 {
			m.b.WriteString("`")
		}
	case "a":
		href := t.attr("href")
		if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
			href = ""
		} else {
			if m.base != nil {
				if u, err := m.base.Parse(href); err == nil {
					href = u.String()
				}
			}
			m.b.WriteString("[")
		}
		m.links = append(m.links, href)
	case "img":
		if alt := t.attr("alt"); alt != "" {
			m.b.WriteString("[image: " + alt + "]")
		}
	default:
		if blockElements[t.name] {
			if t.name == "table" {
				m.closeCell()
			}
			m.block()
		}
	}
}

func (m *mdWriter) end(name string) {
	switch name {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		m.block()
	case "li", "dt", "dd":
		m.newline()
	case "tr":
		m.closeCell()
		m.newline()
	case "td", "th":
		m.closeCell()
	case "pre":
		if m.pre > 0 {
			m.pre--
			m.newline()
			m.b.WriteString("```")
			m.block()
		}
	case "code":
		if m.pre == 0 {
			m.b.WriteString("`")
		}
	case "a":
		if n := len(m.links); n > 0 {
			if href := m.links[n-1]; href != "" {
				m.b.WriteString("](" + href + ")")
			}
			m.links = m.links[:n-1]
		}
	default:
		if blockElements[name] {
			if name == "table" {
				m.closeCell()
			}
			m.block()
		}
	}
}

// htmlToken is a tag or a run of text.
type htmlToken struct {
	kind        int
	name        string // lower-case tag name
	data        string // text, entities decoded
	attrs       []htmlAttr
	selfClosing bool
}

type htmlAttr struct{ key, val string }

const (
	tokenText = iota
	tokenStart
	tokenEnd
)

func (t htmlToken) attr(key string) string {
	for _, a := range t.attrs {
		if a.key == key {
			return a.val
		}
	}
	return ""
}

// rawTextElements hold text up to their end tag, never tags.
var rawTextElements = map[string]bool{
	"script": true, "style": true, "xmp": true, "iframe": true, "noembed": true,
	"noframes": true, "noscript": true, "title": true, "textarea": true, "plaintext": true,
}

// tokenizeHTML splits doc into text and tags, the way an HTML tokenizer
// does for well-formed and commonly malformed pages; comments, doctypes and
// processing instructions are dropped.
func tokenizeHTML(doc string, emit func(htmlToken)) {
	i := 0
	text := func(end int) {
		if end > i {
			emit(htmlToken{kind: tokenText, data: html.UnescapeString(normalizeNewlines(doc[i:end]))})
		}
	}
	for i < len(doc) {
		lt := strings.IndexByte(doc[i:], '<')
		if lt < 0 {
			text(len(doc))
			return
		}
		lt += i
		rest := doc[lt+1:]
		switch {
		case strings.HasPrefix(rest, "!--"):
			text(lt)
			end := strings.Index(rest[3:], "-->")
			if end < 0 {
				return
			}
			i = lt + 1 + 3 + end + 3
		case strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "?") ||
			strings.HasPrefix(rest, "/") && (len(rest) < 2 || !isASCIILetter(rest[1])):
			text(lt)
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return
			}
			i = lt + 1 + end + 1
		case len(rest) > 0 && isASCIILetter(rest[0]), len(rest) > 1 && rest[0] == '/' && isASCIILetter(rest[1]):
			text(lt)
			t, n := parseTag(rest)
			i = lt + 1 + n
			emit(t)
			if t.kind == tokenStart && rawTextElements[t.name] && !t.selfClosing {
				end := rawTextEnd(doc[i:], t.name)
				raw := normalizeNewlines(doc[i : i+end])
				if t.name == "title" || t.name == "textarea" {
					raw = html.UnescapeString(raw)
				}
				if raw != "" {
					emit(htmlToken{kind: tokenText, data: raw})
				}
				i += end
			}
		default:
			// A '<' that starts no tag is text.
			j := strings.IndexByte(doc[lt+1:], '<')
			if j < 0 {
				text(len(doc))
				return
			}
			text(lt + 1 + j)
			i = lt + 1 + j
		}
	}
}

// parseTag parses a start or end tag after its '<' and returns it with the
// number of bytes it took (through its '>', or the rest of s).
func parseTag(s string) (htmlToken, int) {
	t := htmlToken{kind: tokenStart}
	i := 0
	if s[0] == '/' {
		t.kind = tokenEnd
		i = 1
	}
	j := i
	for j < len(s) && !isTagSpace(s[j]) && s[j] != '/' && s[j] != '>' {
		j++
	}
	t.name = strings.ToLower(s[i:j])
	i = j
	for i < len(s) {
		i = skipTagSpace(s, i, &t)
		if i >= len(s) {
			break
		}
		if s[i] == '>' {
			return t, i + 1
		}
		var a htmlAttr
		a, i = parseAttr(s, i)
		if t.kind == tokenStart {
			t.attrs = append(t.attrs, a)
		}
	}
	return t, len(s)
}

// skipTagSpace skips white space and slashes between attributes, noting a
// "/>" that closes the tag.
func skipTagSpace(s string, i int, t *htmlToken) int {
	for i < len(s) && (isTagSpace(s[i]) || s[i] == '/') {
		if s[i] == '/' && i+1 < len(s) && s[i+1] == '>' {
			t.selfClosing = true
		}
		i++
	}
	return i
}

// parseAttr parses one attribute (name, and value if any) at s[i:] and
// returns it with the offset after it.
func parseAttr(s string, i int) (htmlAttr, int) {
	k := i
	for i < len(s) && !isTagSpace(s[i]) && s[i] != '/' && s[i] != '>' && (s[i] != '=' || i == k) {
		i++
	}
	key := strings.ToLower(s[k:i])
	for i < len(s) && isTagSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '=' {
		return htmlAttr{key: key, val: html.UnescapeString("")}, i
	}
	i++
	for i < len(s) && isTagSpace(s[i]) {
		i++
	}
	var val string
	val, i = attrValue(s, i)
	return htmlAttr{key: key, val: html.UnescapeString(val)}, i
}

// attrValue reads a quoted or bare attribute value at s[i:].
func attrValue(s string, i int) (string, int) {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		q := s[i]
		e := strings.IndexByte(s[i+1:], q)
		if e < 0 {
			return s[i+1:], len(s)
		}
		return s[i+1 : i+1+e], i + 1 + e + 1
	}
	k := i
	for i < len(s) && !isTagSpace(s[i]) && s[i] != '>' {
		i++
	}
	return s[k:i], i
}

// rawTextEnd finds the end tag of a raw-text element in s: the offset of
// its "</name", or len(s).
func rawTextEnd(s, name string) int {
	if name == "plaintext" {
		return len(s)
	}
	off := 0
	for {
		k := strings.Index(s[off:], "</")
		if k < 0 {
			return len(s)
		}
		k += off
		e := k + 2 + len(name)
		if e <= len(s) && strings.EqualFold(s[k+2:e], name) && (e == len(s) || isTagSpace(s[e]) || s[e] == '/' || s[e] == '>') {
			return k
		}
		off = k + 2
	}
}

// normalizeNewlines turns CR LF and lone CR into LF, as HTML does.
func normalizeNewlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isTagSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
