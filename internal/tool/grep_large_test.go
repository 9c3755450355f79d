package tool

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestGrepSkimsLargeFilesWithoutMissingMatches puts a match at every
// offset around the edges of the windows a large file is skimmed in (and
// in the first and last bytes), in files of several sizes, and holds the
// grep tool's file list and line numbers to the regexp package run on
// each whole file.
func TestGrepSkimsLargeFilesWithoutMissingMatches(t *testing.T) {
	env := newTestEnv(t)
	type placed struct {
		text string // written into the filler
		at   int    // byte offset
	}
	var files []string
	contents := map[string]string{}
	add := func(size int, ps ...placed) {
		b := []byte(strings.Repeat("abcdefg\n", size/8+1)[:size])
		for _, p := range ps {
			copy(b[p.at:], p.text)
		}
		name := fmt.Sprintf("f%03d.txt", len(files))
		files = append(files, name)
		contents[name] = string(b)
		writeFile(t, filepath.Join(env.Cwd, name), string(b))
	}
	const lit = "NeedleLiteral"
	sizes := []int{grepWindow - 1, grepWindow, grepWindow + 1, 2*grepWindow + 5, 4*grepWindow - 7}
	for _, size := range sizes {
		add(size) // no match
		for _, edge := range []int{0, grepWindow, 2*grepWindow - len(lit), 2 * grepWindow, size - len(lit)} {
			for _, d := range []int{-len(lit) - 1, -len(lit), -len(lit) + 1, -2, -1, 0, 1} {
				if at := edge + d; at >= 0 && at+len(lit) <= size {
					add(size, placed{lit, at})
				}
			}
		}
		// A Kelvin sign for the k of "mask" across an edge: found only
		// by the regexp, which the skimmer must hand the file to.
		add(size, placed{"mas\u212a", grepWindow - 2})
		add(size, placed{"MASK", size - 4})
	}
	for _, c := range []struct {
		pattern string
		fold    bool
	}{
		{lit, false},
		{`Needle\w+`, false},
		{"needleliteral", true},
		{"mask", true},
		{`NeedleLiteral|zzzq`, false}, // no required literal: read whole
	} {
		expr := "(?m)" + c.pattern
		if c.fold {
			expr = "(?i)" + expr
		}
		re := regexp.MustCompile(expr)
		var want []string
		for _, f := range files {
			if re.MatchString(contents[f]) {
				want = append(want, f)
			}
		}
		if len(want) < 2 && c.pattern != "mask" {
			t.Fatalf("%s: the oracle finds %d files; the layout is wrong", c.pattern, len(want))
		}
		got := grepLines(t, env, map[string]any{"pattern": c.pattern, "ignore_case": c.fold, "max_results": maxGrepResults})
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %d files, want %d:\ngot  %q\nwant %q", c.pattern, len(got), len(want), got, want)
		}
	}
	// Lines mode: the line number of a match in a later window.
	name := files[len(files)-3] // the largest, literal near the end
	want := fmt.Sprintf("%s:%d:", name, strings.Count(contents[name][:strings.Index(contents[name], lit)], "\n")+1)
	got := grepLines(t, env, map[string]any{"pattern": lit, "mode": "lines", "include": name})
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("lines mode: got %q, want a line starting %q", got, want)
	}
}
