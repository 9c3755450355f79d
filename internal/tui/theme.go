package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// theme holds the styles of every component. With colour off (NO_COLOR)
// the styles carry attributes only (bold, faint, italic, reverse), never
// a colour.
type theme struct {
	color bool
	dark  bool

	dim, bold, italic, reverse   lipgloss.Style
	accent, ok, warn, fail, info lipgloss.Style
	add, del, hunk               lipgloss.Style
	code, heading, key, thought  lipgloss.Style
	// Syntax highlighting of code blocks (highlight.go).
	hlPlain, hlKeyword, hlType, hlString, hlComment, hlNumber, hlKey lipgloss.Style
}

func newTheme(dark, useColor bool) *theme {
	t := &theme{color: useColor, dark: dark}
	base := lipgloss.NewStyle()
	t.dim = base.Faint(true)
	t.bold = base.Bold(true)
	t.italic = base.Italic(true)
	t.reverse = base.Reverse(true)
	t.thought = base.Faint(true).Italic(true)
	t.heading = base.Bold(true)
	t.key = base.Bold(true)
	t.accent, t.ok, t.warn, t.fail, t.info = base.Bold(true), base, base, base.Bold(true), base
	t.add, t.del, t.hunk, t.code = base, base, base.Faint(true), base
	t.hlPlain, t.hlKeyword, t.hlType, t.hlString, t.hlNumber, t.hlKey = base, base.Bold(true), base, base, base, base
	t.hlComment = base.Faint(true)
	if !useColor {
		return t
	}
	ld := lipgloss.LightDark(dark)
	c := func(light, darkc string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(darkc)) }
	t.accent = base.Bold(true).Foreground(c("#5B3FD6", "#A48BFF"))
	t.ok = base.Foreground(c("#1A7F37", "#3FB950"))
	t.warn = base.Foreground(c("#9A6700", "#D29922"))
	t.fail = base.Bold(true).Foreground(c("#CF222E", "#F85149"))
	t.info = base.Foreground(c("#0969DA", "#58A6FF"))
	t.add = base.Foreground(c("#1A7F37", "#3FB950"))
	t.del = base.Foreground(c("#CF222E", "#F85149"))
	t.hunk = base.Foreground(c("#8250DF", "#BC8CFF"))
	t.code = base.Foreground(c("#953800", "#FFA657"))
	t.heading = base.Bold(true).Foreground(c("#0550AE", "#79C0FF"))
	t.key = base.Bold(true).Foreground(c("#5B3FD6", "#A48BFF"))
	t.hlKeyword = base.Foreground(c("#CF222E", "#FF7B72"))
	t.hlType = base.Foreground(c("#0550AE", "#79C0FF"))
	t.hlNumber = t.hlType
	t.hlString = base.Foreground(c("#0A3069", "#A5D6FF"))
	t.hlComment = base.Italic(true).Foreground(c("#6E7781", "#8B949E"))
	t.hlKey = base.Foreground(c("#116329", "#7EE787"))
	return t
}
