package tui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// markTheme renders each token kind as [kind:text], so a test can read
// the highlighter's classification.
func markTheme() *theme {
	th := newTheme(true, false)
	mark := func(k string) lipgloss.Style {
		return lipgloss.NewStyle().Transform(func(s string) string { return "[" + k + ":" + s + "]" })
	}
	th.hlKeyword, th.hlType, th.hlString = mark("kw"), mark("ty"), mark("str")
	th.hlComment, th.hlNumber, th.hlKey = mark("com"), mark("num"), mark("key")
	return th
}

func TestHighlightTokens(t *testing.T) {
	th := markTheme()
	cases := []struct{ lang, src, want string }{
		{"go", `func f(s string) int { return 0x1F } // done`, `[kw:func] f(s [ty:string]) [ty:int] { [kw:return] [num:0x1F] } [com:// done]`},
		{"go", `x := "a \" b" + 'c'`, `x := [str:"a \" b"] + [str:'c']`},
		{"python", `def f(): return None  # why`, `[kw:def] f(): [kw:return] [ty:None]  [com:# why]`},
		{"ts", `const n: number = 2;`, `[kw:const] n: [ty:number] = [num:2];`},
		{"json", `{"a": "b", "n": 1.5, "t": true}`, `{[key:"a"]: [str:"b"], [key:"n"]: [num:1.5], [key:"t"]: [ty:true]}`},
		{"bash", `echo a#b # note`, `[kw:echo] a#b [com:# note]`},
		{"yaml", `port: 80 # web`, `[key:port]: [num:80] [com:# web]`},
		{"c", `#include <stdio.h>`, `[kw:#include] <stdio.h>`},
		{"rust", `let v2 = x;`, `[kw:let] v2 = x;`},
	}
	for _, c := range cases {
		h := highlighter{lang: langFor(c.lang)}
		if got := h.line(th, c.src); got != c.want {
			t.Errorf("%s %q:\n got %s\nwant %s", c.lang, c.src, got, c.want)
		}
	}
}

// A block comment or a multi-line string spans lines; rendering the live
// tail with a copy of the renderer must not change its state.
func TestHighlightSpansLines(t *testing.T) {
	th := markTheme()
	md := markdown{th: th}
	var got []string
	for _, l := range []string{"```go", "a := 1 /* one", "two */ b := `raw", "still` + 2", "```"} {
		cp := md
		cp.line(l, 200) // the view draws the tail with a copy
		got = append(got, strings.Join(md.line(l, 200), "|"))
	}
	want := []string{"a := [num:1] [com:/* one]", "[com:two */] b := [str:`raw]", "[str:still`] + [num:2]"}
	for i, w := range want {
		if !strings.Contains(got[i+1], w) {
			t.Errorf("line %d: got %q, want it to hold %q", i+1, got[i+1], w)
		}
	}
	// An unknown language is shown as before: the code style, no tokens.
	md = markdown{th: th}
	md.line("```brainfuck", 80)
	if l := md.line("func if", 80); strings.Contains(l[0], "[kw:") {
		t.Errorf("unknown language highlighted: %q", l)
	}
}
