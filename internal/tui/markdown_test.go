package tui

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"charm.land/lipgloss/v2"
)

// styledParagraph is a paragraph line rendered the general way (inline
// markup, then a styled wrap), which plainLine must match.
func styledParagraph(m *markdown, src string, width int) []string {
	width = max(width, 10)
	trimmed := strings.TrimSpace(src)
	indent := len(src) - len(strings.TrimLeftFunc(src, unicode.IsSpace))
	pad := strings.Repeat(" ", min(indent, 8))
	return wrapStyled(m.inline(trimmed, lipgloss.NewStyle()), width, pad, pad)
}

// TestPlainLinesRenderAsStyledOnes: a paragraph line without markup takes
// plainLine's fast way, and comes out exactly as the general renderer
// draws it, wrapped or not, at any width, in every theme.
func TestPlainLinesRenderAsStyledOnes(t *testing.T) {
	lines := []string{
		"plain words and nothing else",
		strings.Repeat("0123456789", 9) + "lorem ips",
		"   indented by three, with a\ttab inside",
		"\tindented by a tab",
		"            indented past eight",
		"a-very-long-hyphenated-word-that-goes-on-and-on-without-any-space-at-all-so-it-breaks",
		"a/path/with/slashes/that/is/long/enough/to/be/broken/somewhere/along/the/way/ok",
		strings.Repeat("x", 130),
		"two  spaces   and three    and four     between words that wrap at some width or other",
		"ends with a dash - and then more words after the dash to make the line long enough",
		"2 apples, 3 pears; (parens) {braces} <angles> 'quotes' \"double\" !?.,:;=%$@&^|",
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghij KLMNOP  0123-/.,;\t"
	for range 300 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		lines = append(lines, string(b))
	}
	for _, th := range []*theme{newTheme(true, true), newTheme(false, false)} {
		m := &markdown{th: th}
		for _, l := range lines {
			if len(strings.TrimSpace(l)) == 0 {
				continue
			}
			for _, w := range []int{5, 12, 40, 80, 99, 100, 101, 140} {
				want := styledParagraph(m, l, w)
				trimmed := strings.TrimSpace(l)
				if _, _, ok := listItem(trimmed); ok || isRule(trimmed) {
					continue // not a paragraph
				}
				if _, ok := appendPlain(nil, trimmed, max(w, 10), strings.Repeat(" ", min(len(l)-len(strings.TrimLeftFunc(l, unicode.IsSpace)), 8))); !ok {
					t.Fatalf("%q was not taken as plain", l)
				}
				if got := m.line(l, w); !slices.Equal(got, want) {
					t.Errorf("%q at %d columns:\ngot  %q\nwant %q", l, w, got, want)
				}
			}
		}
	}
}

// TestMarkupIsNotPlain: a line with inline markup, or outside printable
// ASCII, takes the general way.
func TestMarkupIsNotPlain(t *testing.T) {
	for _, l := range []string{"some **bold**", "an *em*", "snake_case", "`code`", "a [link](x)",
		`a \* star`, "café", "wide 字", "bell \a"} {
		if _, ok := appendPlain(nil, l, 80, ""); ok {
			t.Errorf("%q taken as plain", l)
		}
	}
}

// BenchmarkMarkdownPlainLine renders a long answer's line: 99 bytes of
// plain text on a terminal 100 columns wide.
func BenchmarkMarkdownPlainLine(b *testing.B) {
	m := &markdown{th: newTheme(true, true)}
	line := strings.Repeat("0123456789", 9) + "lorem ips"
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		_ = m.line(line, 100)
	}
}
