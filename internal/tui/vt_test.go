package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// vt is a terminal as far as the TUI's output goes, with tmux's ways where
// terminals differ: a line written past the last column wraps, LF at the
// bottom scrolls the top row into the history, an erase of the screen from
// its top-left cell scrolls the screen into the history (scroll-on-clear),
// and a resize works as tmux's does (screen.c, screen_resize_cursor): a
// smaller height first deletes the rows below the cursor, then pushes rows
// from the top into the history; a smaller width then splits every row
// wider than it, the history's too, the cursor staying on its row's first
// part and the screen being the last rows.
type vt struct {
	mu       sync.Mutex
	w, h     int
	rows     [][]rune // the screen; a row holds its written cells
	history  []string
	x, y     int
	wrapNext bool // the last column was written: the next character wraps
	// mapNL: LF goes to the first column too, as a terminal whose output
	// maps NL to CR NL (bubbletea writes for one when its input is not a
	// terminal, as in tests).
	mapNL bool
	// noWrap: autowrap is off (DECAWM reset): the last column is written
	// over and over.
	noWrap bool
	bad    []string
}

func newVT(w, h int) *vt {
	return &vt{w: w, h: h, rows: make([][]rune, h)}
}

func (v *vt) size() (int, int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.w, v.h
}

// Write parses p.
func (v *vt) Write(p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.parse(string(p))
	return len(p), nil
}

func (v *vt) lf() {
	if v.y == v.h-1 {
		v.history = append(v.history, string(v.rows[0]))
		v.rows = append(v.rows[1:], nil)
		return
	}
	v.y++
}

func (v *vt) put(r rune) {
	if v.wrapNext {
		v.wrapNext = false
		v.x = 0
		v.lf()
	}
	row := v.rows[v.y]
	for len(row) <= v.x {
		row = append(row, ' ')
	}
	row[v.x] = r
	v.rows[v.y] = row
	if v.x == v.w-1 {
		v.wrapNext = !v.noWrap
	} else {
		v.x++
	}
}

func (v *vt) parse(p string) {
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\r':
			v.x, v.wrapNext = 0, false
			i++
		case c == '\n':
			v.wrapNext = false
			v.lf()
			if v.mapNL {
				v.x = 0
			}
			i++
		case c == '\t':
			v.x, v.wrapNext = min((v.x/8+1)*8, v.w-1), false
			i++
		case c == '\b':
			v.x, v.wrapNext = max(v.x-1, 0), false
			i++
		case c == 0x1b:
			i = v.escape(p, i)
		case c < 0x20:
			i++
		default:
			r, n := utf8.DecodeRuneInString(p[i:])
			v.put(r)
			i += n
		}
	}
}

// escape handles the sequence at p[i] and returns the index after it.
func (v *vt) escape(p string, i int) int {
	if i+1 >= len(p) {
		return len(p)
	}
	switch p[i+1] {
	case '[':
	case 'M': // reverse index: up, scrolling down at the top
		v.wrapNext = false
		if v.y > 0 {
			v.y--
		} else {
			v.rows = slices.Insert(v.rows[:v.h-1], 0, []rune(nil))
		}
		return i + 2
	case ']', 'P', '_': // OSC, DCS, APC: up to BEL or ST
		for j := i + 2; j < len(p); j++ {
			if p[j] == 7 {
				return j + 1
			}
			if p[j] == 0x1b && j+1 < len(p) && p[j+1] == '\\' {
				return j + 2
			}
		}
		return len(p)
	default:
		return i + 2
	}
	j := i + 2
	for j < len(p) && (p[j] < 0x40 || p[j] > 0x7e) {
		j++
	}
	if j == len(p) {
		return j
	}
	params, final := p[i+2:j], p[j]
	if params == "?7" && (final == 'h' || final == 'l') {
		v.noWrap = final == 'l'
		return j + 1
	}
	if strings.ContainsAny(params, "?<>=") || final == 'm' || final == 'q' || final == 'u' {
		return j + 1 // modes, styles, queries
	}
	n, err := strconv.Atoi(strings.Split(params, ";")[0])
	if err != nil {
		n = 0
	}
	one := max(n, 1)
	switch final {
	case 'A':
		v.y, v.wrapNext = max(v.y-one, 0), false
	case 'B':
		v.y, v.wrapNext = min(v.y+one, v.h-1), false
	case 'C':
		v.x, v.wrapNext = min(v.x+one, v.w-1), false
	case 'D':
		v.x, v.wrapNext = max(v.x-one, 0), false
	case 'G':
		v.x, v.wrapNext = min(one-1, v.w-1), false
	case 'K':
		switch n {
		case 0:
			v.rows[v.y] = v.rows[v.y][:min(v.x, len(v.rows[v.y]))]
		case 2:
			v.rows[v.y] = nil
		default:
			v.bad = append(v.bad, fmt.Sprintf("%q", p[i:j+1]))
		}
	case 'J':
		if n != 0 {
			v.bad = append(v.bad, fmt.Sprintf("%q", p[i:j+1]))
			break
		}
		if v.x == 0 && v.y == 0 { // tmux's scroll-on-clear
			for _, r := range v.rows {
				v.history = append(v.history, string(r))
			}
			v.rows = make([][]rune, v.h)
			break
		}
		v.rows[v.y] = v.rows[v.y][:min(v.x, len(v.rows[v.y]))]
		for k := v.y + 1; k < v.h; k++ {
			v.rows[k] = nil
		}
	case 'L':
		for range min(one, v.h-v.y) {
			v.rows = slices.Insert(v.rows[:v.h-1], v.y, []rune(nil))
		}
		v.x = 0
	case 'M':
		for range min(one, v.h-v.y) {
			v.rows = append(slices.Delete(v.rows, v.y, v.y+1), nil)
		}
		v.x = 0
	default:
		v.bad = append(v.bad, fmt.Sprintf("%q", p[i:j+1]))
	}
	return j + 1
}

// resize resizes the terminal as tmux does (see vt).
func (v *vt) resize(w, h int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.wrapNext = false
	if h < v.h {
		need := v.h - h
		del := min(v.h-1-v.y, need)
		v.rows = v.rows[:v.h-del]
		need -= del
		for _, r := range v.rows[:need] {
			v.history = append(v.history, string(r))
		}
		v.rows = v.rows[need:]
		v.y -= need
	}
	for len(v.rows) < h {
		v.rows = append(v.rows, nil)
	}
	v.h = h
	if w < v.w {
		var hist []string
		for _, l := range v.history {
			r := []rune(l)
			for len(r) > w {
				hist = append(hist, string(r[:w]))
				r = r[w:]
			}
			hist = append(hist, string(r))
		}
		var all [][]rune
		cy := 0
		for k, r := range v.rows {
			if k == v.y {
				cy = len(hist) + len(all)
			}
			for len(r) > w {
				all = append(all, r[:w])
				r = r[w:]
			}
			all = append(all, r)
		}
		total := append(stringsRunes(hist), all...)
		cut := len(total) - h
		v.history = nil
		for _, r := range total[:cut] {
			v.history = append(v.history, string(r))
		}
		v.rows = total[cut:]
		v.y = cy - cut
		if v.y < 0 {
			v.x, v.y = 0, 0
		}
		v.x = min(v.x, w-1)
	}
	v.w = w
}

func stringsRunes(ss []string) [][]rune {
	out := make([][]rune, len(ss))
	for i, s := range ss {
		out[i] = []rune(s)
	}
	return out
}

// all is the history and then the screen, each row's trailing blanks cut.
func (v *vt) all() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := slices.Clone(v.history)
	for _, r := range v.rows {
		out = append(out, string(r))
	}
	for i := range out {
		out[i] = strings.TrimRight(out[i], " ")
	}
	return out
}

// screen is the screen's rows.
func (v *vt) screen() []string {
	all := v.all()
	_, h := v.size()
	return all[len(all)-h:]
}
