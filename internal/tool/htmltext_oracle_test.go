package tool

// oracleHTMLToMarkdown is the converter corvid used before it dropped
// golang.org/x/net/html from the binary: the same rules over a tree built
// by a full HTML5 parser. TestHTMLToMarkdownMatchesTheTreeParser holds the
// streaming converter to it on real pages.

import (
	"go/build"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToMarkdown reduces an HTML document to readable text with light
// Markdown: headings, lists, links, code and paragraphs. Scripts, styles
// and other non-content elements are dropped.
func oracleHTMLToMarkdown(r io.Reader, base *url.URL) string {
	doc, err := html.Parse(r)
	if err != nil {
		return ""
	}
	m := &oracleMD{base: base}
	m.node(doc)
	out := strings.TrimSpace(m.b.String())
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return oracleBlankRuns.ReplaceAllString(strings.Join(lines, "\n"), "\n\n") + "\n"
}

var (
	oracleBlankRuns = regexp.MustCompile(`\n{3,}`)
	oracleSpaceRuns = regexp.MustCompile(`[ \t\r\n\f]+`)
)

type oracleMD struct {
	b    strings.Builder
	base *url.URL
	pre  int // depth inside <pre>
}

func (m *oracleMD) block() {
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

func (m *oracleMD) newline() {
	if s := m.b.String(); s != "" && !strings.HasSuffix(s, "\n") {
		m.b.WriteString("\n")
	}
}

func (m *oracleMD) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		m.node(c)
	}
}

func (m *oracleMD) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if m.pre > 0 {
			m.b.WriteString(n.Data)
			return
		}
		t := oracleSpaceRuns.ReplaceAllString(n.Data, " ")
		if s := m.b.String(); t != "" && (s == "" || strings.HasSuffix(s, "\n") || strings.HasSuffix(s, " ")) {
			t = strings.TrimLeft(t, " ")
		}
		m.b.WriteString(t)
		return
	case html.DocumentNode:
		m.children(n)
		return
	case html.ElementNode:
	default:
		return
	}
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
		href := oracleAttr(n, "href")
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
	case atom.Img:
		if alt := oracleAttr(n, "alt"); alt != "" {
			m.b.WriteString("[image: " + alt + "]")
		}
	default:
		m.children(n)
	}
}

func oracleAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// realHTMLPages are HTML documents found on this machine: the Go
// distribution's own docs and the x/net/html test pages in the module
// cache.
func realHTMLPages(t testing.TB) []string {
	var pages []string
	for _, pat := range []string{
		filepath.Join(runtime.GOROOT(), "doc", "*.html"),
		filepath.Join(build.Default.GOPATH, "pkg", "mod", "golang.org", "x", "net@*", "html", "testdata", "*.html"),
		filepath.Join(runtime.GOROOT(), "src", "cmd", "vendor", "golang.org", "x", "tools", "*", "*.html"),
	} {
		m, _ := filepath.Glob(pat)
		pages = append(pages, m...)
	}
	if len(pages) == 0 {
		t.Skip("no HTML documents found in GOROOT/doc or the module cache")
	}
	return pages
}

func TestHTMLToMarkdownMatchesTheTreeParser(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/page.html")
	docs := map[string]string{
		"fetch test": `<html><head><title>T</title><style>p{}</style></head><body>
<nav><a href="/">Home</a></nav>
<h1>Title</h1><p>Some <b>bold</b>   text with a <a href="/doc">link</a>.</p>
<script>alert(1)</script>
<ul><li>one</li><li>two</li></ul>
<pre><code>x := 1
y := 2</code></pre></body></html>`,
		"implied ends": "<p>one<p>two<ul><li>a<li>b</ul><table><tr><td>1<td>2<tr><td>3</table><dl><dt>t<dd>d</dl>",
		"entities":     "<p>a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#39; &nbsp;f &eacute; &#x263A; &copy</p><a href='/x?a=1&amp;b=2'>q</a>",
		"skipped":      "<body><svg><g><svg></svg><text>no</text></g></svg><button>no</button><select><option>no</select><noscript>no</noscript><canvas>no</canvas>yes<template>no</template><iframe src=x>no</iframe></body>",
		"pre":          "<pre>\nfirst\r\n  second</pre><pre><code class=go>a\n\tb</code></pre>\r\n<p>x<br>y<hr>z</p>",
		"comments":     "<!DOCTYPE html><!-- <p>no</p> --><?xml x?><p>yes</p><![CDATA[x]]>< p>lt<3 a</ p>",
		"head text":    "<head><meta charset=utf-8><link rel=x>Body text<p>more</p>",
		"attributes":   `<a href=/plain>1</a><A HREF="/UP" title='x > y'>2</A><a href="#top">3</a><a href="javascript:void(0)">4</a><img alt="pic" src=x><img src=y>`,
	}
	for _, p := range realHTMLPages(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[p] = string(b)
	}
	for name, doc := range docs {
		want := oracleHTMLToMarkdown(strings.NewReader(doc), base)
		got := htmlToMarkdown(doc, base)
		if got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			i := 0
			for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
				i++
			}
			t.Errorf("%s: differs from the tree parser at line %d:\n got %q\nwant %q", name, i+1, strings.Join(gl[i:min(i+3, len(gl))], "\n"), strings.Join(wl[i:min(i+3, len(wl))], "\n"))
		}
	}
}

// BenchmarkHTMLToMarkdown converts the real pages with corvid's streaming
// converter and with the x/net/html tree converter above (ARCHITECTURE.md
// §6 has the figures).
func BenchmarkHTMLToMarkdown(b *testing.B) {
	base, _ := url.Parse("https://example.com/docs/page.html")
	var docs []string
	var total int64
	for _, p := range realHTMLPages(b) {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, string(d))
		total += int64(len(d))
	}
	for _, c := range []struct {
		name    string
		convert func(doc string)
	}{
		{"stream", func(doc string) { htmlToMarkdown(doc, base) }},
		{"x-net-html", func(doc string) { oracleHTMLToMarkdown(strings.NewReader(doc), base) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					c.convert(d)
				}
			}
		})
	}
}
