package tui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// screen is as much of a terminal as a print's insertion uses: text, CR,
// LF (scrolling into a scrollback at the bottom), cursor up and down,
// insert line and erase to the end of the line.
type screen struct {
	rows       [][]byte
	scrollback []string
	x, y       int
}

func newScreen(height int) *screen {
	return &screen{rows: make([][]byte, height)}
}

func (s *screen) write(t *testing.T, p string) {
	t.Helper()
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\r':
			s.x = 0
		case '\n':
			if s.y == len(s.rows)-1 {
				s.scrollback = append(s.scrollback, string(s.rows[0]))
				s.rows = append(s.rows[1:], nil)
			} else {
				s.y++
			}
		case '\x1b':
			j := i + 2
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				j++
			}
			if i+1 >= len(p) || p[i+1] != '[' || j == len(p) {
				t.Fatalf("unknown sequence at %d: %q", i, p[i:])
			}
			n, err := strconv.Atoi(p[i+2 : j])
			if err != nil {
				n = 1
			}
			switch p[j] {
			case 'A':
				s.y = max(s.y-n, 0)
			case 'B':
				s.y = min(s.y+n, len(s.rows)-1)
			case 'L':
				for range n {
					s.rows = slices.Insert(s.rows[:len(s.rows)-1], s.y, nil)
				}
			case 'K':
				s.rows[s.y] = s.rows[s.y][:min(s.x, len(s.rows[s.y]))]
			default:
				t.Fatalf("unknown sequence %q", p[i:j+1])
			}
			i = j
		default:
			for len(s.rows[s.y]) < s.x {
				s.rows[s.y] = append(s.rows[s.y], ' ')
			}
			s.rows[s.y] = append(s.rows[s.y][:s.x], c)
			s.x++
		}
	}
}

// all is the scrollback and then the screen, trailing empty rows left out.
func (s *screen) all() []string {
	out := slices.Clone(s.scrollback)
	for _, r := range s.rows {
		out = append(out, string(r))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// A print's further parts, written after bubbletea's insertion of its
// first, leave the terminal as the parts one by one would: every line in
// the scrollback once and in order, the live region whole below them and
// the cursor on its first row, whether the live region starts at the
// bottom of the screen or higher up, as after a start on an empty screen.
func TestSpilledPartsInsertLikeBubbletea(t *testing.T) {
	for _, tc := range []struct{ height, above, live, part int }{
		{10, 7, 3, 6}, {10, 2, 3, 6}, {10, 0, 1, 8}, {24, 20, 4, 19}, {5, 4, 1, 3},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			s := newScreen(tc.height)
			var before, want []string
			for i := range tc.above {
				before = append(before, fmt.Sprintf("old %d", i))
			}
			live := []string{}
			for i := range tc.live {
				live = append(live, fmt.Sprintf("live %d", i))
			}
			s.write(t, strings.Join(append(slices.Clone(before), live...), "\r\n"))
			// bubbletea's insertion of the first part left the cursor on
			// the live region's first row.
			s.write(t, "\r")
			if tc.live > 1 {
				s.write(t, ansi.CursorUp(tc.live-1))
			}
			var printed []string
			for p := range 5 {
				var part []string
				for i := range tc.part - p%2 {
					part = append(part, fmt.Sprintf("line %d.%d", p, i))
				}
				if p == 3 {
					part = []string{""}
					printed = append(printed, " ") // an empty print is a space
				} else {
					printed = append(printed, part...)
				}
				s.write(t, string(appendInsert(nil, part, tc.live, 40)))
			}
			want = append(append(append(want, before...), printed...), live...)
			if got := s.all(); !slices.Equal(got, want) {
				t.Errorf("the terminal holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if s.y != tc.height-tc.live && len(before)+len(printed)+tc.live >= tc.height || s.x != 0 {
				t.Errorf("cursor at %d,%d, not on the live region's first row", s.x, s.y)
			}
		})
	}
}

// The parts are written with bubbletea's write of the first part, and
// only with that one; the live region's height comes from that write.
func TestSpillGoesWithTheFirstPart(t *testing.T) {
	var sp spiller
	first := "a\nb"
	bubbletea := "\r" + ansi.CursorDown(2) + "\n\n" + ansi.CursorUp(2+4-1) + ansi.InsertLine(2) +
		ansi.EraseLineRight + "a\r\n" + ansi.EraseLineRight + "b\r\n"
	if h, ok := insertHeight([]byte(bubbletea)); !ok || h != 4 {
		t.Fatalf("insertHeight = %d, %v; want 4", h, ok)
	}
	sp.arm(first, [][]string{{"c", "d"}, {"e"}}, 80)
	frame := "\x1b[?2026h" + ansi.EraseLineRight + "frame\r\n"
	if got := string(sp.expand([]byte(frame))); got != frame {
		t.Errorf("a frame was expanded: %q", got)
	}
	got := string(sp.expand([]byte(bubbletea)))
	want := bubbletea + string(appendInsert(appendInsert(nil, []string{"c", "d"}, 4, 80), []string{"e"}, 4, 80))
	if got != want {
		t.Errorf("expanded:\n%q\nwant\n%q", got, want)
	}
	if again := string(sp.expand([]byte(bubbletea))); again != bubbletea {
		t.Error("the parts were written twice")
	}
	if !sp.disarm() {
		t.Error("disarm says the parts were not written")
	}
	sp.arm(first, [][]string{{"c"}}, 80)
	if sp.disarm() {
		t.Error("disarm says parts never written were")
	}
}

// appendInsertJoined is appendInsert as it was first written: the part
// joined into one text and split again. appendInsert walks the lines in
// place and must write the very same bytes.
func appendInsertJoined(out []byte, part []string, h, width int) []byte {
	text := strings.Join(part, "\n")
	if text == "" {
		text = " "
	}
	lines := strings.Split(text, "\n")
	rows := len(lines)
	for _, l := range lines {
		if len(l) > width && width > 0 {
			if w := ansi.StringWidth(l); w > width {
				rows += (w - 1) / width
			}
		}
	}
	out = append(out, '\r')
	out = append(out, strings.Repeat("\n", h-1+rows)...)
	out = append(out, ansi.CursorUp(rows+h-1)...)
	out = append(out, ansi.InsertLine(rows)...)
	for _, l := range lines {
		out = append(out, l...)
		out = append(out, '\r', '\n')
	}
	return out
}

func TestAppendInsertIsJoinThenSplit(t *testing.T) {
	pieces := []string{"", " ", "\n", "a", "word", "\n\n", "é", "\x1b[1mbold\x1b[m", strings.Repeat("x", 45), "\t", "漢字漢字漢字"}
	r := rand.New(rand.NewPCG(1, 2))
	parts := [][]string{nil, {}, {""}, {"", ""}, {"\n"}, {"a\n", ""}, {"", "b"}}
	for range 5000 {
		part := make([]string, r.IntN(5))
		for i := range part {
			for range r.IntN(4) {
				part[i] += pieces[r.IntN(len(pieces))]
			}
		}
		parts = append(parts, part)
	}
	for _, part := range parts {
		for _, width := range []int{0, 10, 40} {
			h := 1 + len(part)%3
			if got, want := appendInsert([]byte("p"), part, h, width), appendInsertJoined([]byte("p"), part, h, width); string(got) != string(want) {
				t.Fatalf("appendInsert(%q, %d, %d) = %q, joined and split: %q", part, h, width, got, want)
			}
		}
	}
}
