package tool

import (
	"io"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToMarkdown reduces an HTML document to readable text with light
// Markdown: headings, lists, links, code and paragraphs. Scripts, styles
// and other non-content elements are dropped.
func htmlToMarkdown(r io.Reader, base *url.URL) string {
	doc, err := html.Parse(r)
	if err != nil {
		return ""
	}
	m := &mdWriter{base: base}
	m.node(doc)
	out := strings.TrimSpace(m.b.String())
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return blankRuns.ReplaceAllString(strings.Join(lines, "\n"), "\n\n") + "\n"
}

var (
	blankRuns = regexp.MustCompile(`\n{3,}`)
	spaceRuns = regexp.MustCompile(`[ \t\r\n\f]+`)
)

type mdWriter struct {
	b    strings.Builder
	base *url.URL
	pre  int // depth inside <pre>
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

func (m *mdWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		m.node(c)
	}
}

func (m *mdWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		m.text(n)
	case html.DocumentNode:
		m.children(n)
	case html.ElementNode:
		m.element(n)
	}
}

// text writes a text node: as is inside <pre>, else with runs of white
// space collapsed and none at the start of a line.
func (m *mdWriter) text(n *html.Node) {
	if m.pre > 0 {
		m.b.WriteString(n.Data)
		return
	}
	t := spaceRuns.ReplaceAllString(n.Data, " ")
	if s := m.b.String(); t != "" && (s == "" || strings.HasSuffix(s, "\n") || strings.HasSuffix(s, " ")) {
		t = strings.TrimLeft(t, " ")
	}
	m.b.WriteString(t)
}

// link writes <a> as a Markdown link with an absolute address; in-page
// and script links keep only their text.
func (m *mdWriter) link(n *html.Node) {
	href := attr(n, "href")
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		m.children(n)
		return
	}
	if m.base != nil {
		if u, err := m.base.Parse(href); err == nil {
			href = u.String()
		}
	}
	m.b.WriteString("[")
	m.children(n)
	m.b.WriteString("](" + href + ")")
}

// element writes one element by its kind.
func (m *mdWriter) element(n *html.Node) {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe,
		atom.Head, atom.Button, atom.Select, atom.Canvas, atom.Object:
		return
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		m.block()
		m.b.WriteString(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
		m.children(n)
		m.block()
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer,
		atom.Nav, atom.Aside, atom.Ul, atom.Ol, atom.Table, atom.Blockquote, atom.Form,
		atom.Figure, atom.Dl:
		m.block()
		m.children(n)
		m.block()
	case atom.Li:
		m.newline()
		m.b.WriteString("- ")
		m.children(n)
		m.newline()
	case atom.Dt, atom.Dd, atom.Tr:
		m.newline()
		m.children(n)
		m.newline()
	case atom.Td, atom.Th:
		m.children(n)
		m.b.WriteString(" | ")
	case atom.Br:
		m.b.WriteString("\n")
	case atom.Hr:
		m.block()
		m.b.WriteString("---")
		m.block()
	case atom.Pre:
		m.block()
		m.b.WriteString("```\n")
		m.pre++
		m.children(n)
		m.pre--
		m.newline()
		m.b.WriteString("```")
		m.block()
	case atom.Code:
		if m.pre > 0 {
			m.children(n)
			return
		}
		m.b.WriteString("`")
		m.children(n)
		m.b.WriteString("`")
	case atom.A:
		m.link(n)
	case atom.Img:
		if alt := attr(n, "alt"); alt != "" {
			m.b.WriteString("[image: " + alt + "]")
		}
	default:
		m.children(n)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
