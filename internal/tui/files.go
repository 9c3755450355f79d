package tui

import (
	"bytes"
	"io/fs"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
)

// maxFiles bounds the workspace listing the @ finder searches.
const maxFiles = 50_000

// listFiles lists the workspace's files, relative to dir. In a git work
// tree it asks git (tracked and untracked files, without what .gitignore
// and the other exclude files ignore); elsewhere it walks dir, skipping
// hidden directories.
//
// The repository's config is not the user's: a workspace that came as an
// archive can bring a .git/config whose core.fsmonitor is a command, and
// `git ls-files` runs it. Typing @ must run nothing of the repository's,
// so the hook is turned off on the command line, which the repository's
// config cannot override (git ls-files runs no other program of the
// config's: no filter, hook or pager, its output being a pipe).
func listFiles(dir string) []string {
	cmd := exec.Command("git", "-c", "core.fsmonitor=false", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 && len(files) < maxFiles {
				files = append(files, string(f))
			}
		}
		return files
	}
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(files) >= maxFiles {
			return filepath.SkipDir
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if rel, err := filepath.Rel(dir, p); err == nil {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files
}

// fuzzy ranks the files that hold query's characters in order (case
// insensitive): matches in the file name, consecutive and at word starts
// rank first, then shorter paths.
func fuzzy(files []string, query string, limit int) []string {
	type hit struct {
		path  string
		score int
	}
	q := strings.ToLower(query)
	var hits []hit
	for _, f := range files {
		if s, ok := fuzzyScore(strings.ToLower(f), q); ok {
			hits = append(hits, hit{f, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return len(hits[i].path) < len(hits[j].path)
	})
	var out []string
	for i := 0; i < len(hits) && i < limit; i++ {
		out = append(out, hits[i].path)
	}
	return out
}

func fuzzyScore(path, q string) (int, bool) {
	base := strings.LastIndexByte(path, '/') + 1
	score, pi, prev := 0, 0, -2
	for _, r := range q {
		i := strings.IndexRune(path[pi:], r)
		if i < 0 {
			return 0, false
		}
		at := pi + i
		switch {
		case at == prev+1:
			score += 3
		case at == 0 || strings.ContainsRune("/._-", rune(path[at-1])):
			score += 2
		}
		if at >= base {
			score++
		}
		prev, pi = at, at+len(string(r))
	}
	return score, true
}

// finder is the open @ finder.
type finder struct {
	word    string // the @word it matched (without the @)
	start   int    // the rune index of the @ in the input
	matches []string
	sel     int
	off     bool // Esc closed it; it stays closed for this word
}

// atWord returns the @word that ends at the cursor, if any.
func (in *input) atWord() (word string, start int, ok bool) {
	i := in.cur
	for i > 0 && !unicode.IsSpace(in.buf[i-1]) {
		i--
	}
	if i == in.cur || in.buf[i] != '@' || (i > 0 && !unicode.IsSpace(in.buf[i-1])) {
		return "", 0, false
	}
	return string(in.buf[i+1 : in.cur]), i, true
}

// refreshFinder follows the @word at the cursor; the first @ lists the
// workspace's files.
func (m *model) refreshFinder() tea.Cmd {
	word, start, ok := m.in.atWord()
	if !ok || m.perm != nil || m.picker != nil {
		m.finder = nil
		return nil
	}
	if m.finder != nil && m.finder.word == word && m.finder.start == start {
		if m.finder.matches == nil && m.files != nil {
			m.finder.matches = fuzzy(m.files, word, 8)
		}
		return nil
	}
	m.finder = &finder{word: word, start: start}
	if m.files != nil {
		m.finder.matches = fuzzy(m.files, word, 8)
	}
	if m.filesAsked {
		return nil
	}
	m.filesAsked = true
	dir := m.opts.Cwd
	return func() tea.Msg { return filesMsg{files: listFiles(dir)} }
}

// finderKey handles a key while the finder shows matches; false leaves
// the key to the input.
func (m *model) finderKey(s string) bool {
	f := m.finder
	if f == nil || f.off || len(f.matches) == 0 {
		return false
	}
	switch s {
	case "up", "ctrl+p":
		f.sel = (f.sel + len(f.matches) - 1) % len(f.matches)
	case "down", "ctrl+n":
		f.sel = (f.sel + 1) % len(f.matches)
	case "tab", "enter", "#":
		// # picks the file and starts a line range: @path#20-45 (attach.go).
		end := " "
		if s == "#" {
			end = "#"
		}
		pick := "@" + f.matches[f.sel] + end
		m.in.buf = append(m.in.buf[:f.start], append([]rune(pick), m.in.buf[m.in.cur:]...)...)
		m.in.cur = f.start + len([]rune(pick))
		m.finder = nil
	case "esc":
		f.off = true
	default:
		return false
	}
	return true
}
