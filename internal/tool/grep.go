package tool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

//go:embed grep.md
var grepDescription string

const (
	defaultGrepResults = 200
	maxGrepResults     = 2000
	maxGrepContext     = 10
	maxGrepLineRunes   = 300
)

// Grep searches file contents.
type Grep struct{}

type grepInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path,omitempty"`
	Include    string `json:"include,omitempty"`
	Exclude    string `json:"exclude,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Mode       string `json:"mode,omitempty"`
	Context    int    `json:"context,omitempty"`
	MaxResults int    `json:"max_results,omitempty"`
}

func (Grep) Name() string        { return "grep" }
func (Grep) Description() string { return grepDescription }
func (Grep) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Regular expression (Go RE2 syntax)"},` +
		`"path":{"type":"string","description":"File or directory to search (default: the working directory)"},` +
		`"include":{"type":"string","description":"Only files matching this glob, e.g. *.go"},` +
		`"exclude":{"type":"string","description":"Skip files or directories matching this glob"},` +
		`"ignore_case":{"type":"boolean","description":"Case-insensitive match"},` +
		`"mode":{"type":"string","enum":["files","lines","counts"],"description":"files (default), lines or counts"},` +
		`"context":{"type":"integer","description":"Context lines around matches in lines mode"},` +
		`"max_results":{"type":"integer","description":"Cap on files or output lines (default 200)"}},` +
		`"required":["pattern"]}`)
}

func (Grep) Describe(env *Env, raw json.RawMessage) Preview {
	var in grepInput
	looseDecode(raw, &in)
	p := env.Resolve(in.Path)
	title := "Search " + quoteCommand(in.Pattern)
	if in.Path != "" {
		title += " in " + displayDir(env, p)
	}
	if in.Include != "" {
		title += " (" + in.Include + ")"
	}
	return Preview{Kind: KindSearch, Title: title, Access: AccessRead, Paths: []string{p}}
}

func (Grep) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in grepInput
	if r := decodeInput("grep", call.Input, &in); r != nil {
		return *r, nil
	}
	if in.Pattern == "" {
		return ErrorResult(`grep needs a "pattern"`), nil
	}
	q, msg := newGrepQuery(in)
	if msg != "" {
		return ErrorResult(msg), nil
	}
	root := env.Resolve(in.Path)
	st, err := os.Stat(root)
	if err != nil {
		return fsFailure(ctx, "search", root, err)
	}
	var res grepResults
	switch {
	case st.IsDir():
		res, err = q.searchTree(ctx, root)
		if err != nil {
			return Result{}, err
		}
	case !st.Mode().IsRegular():
		return ErrorResult((&NotRegularError{Path: root, Mode: st.Mode()}).Error()), nil
	default:
		fm, skip := q.searchFile(root, noDirRef, newGrepBuffer())
		if fm.count > 0 {
			res.files, res.total = []fileMatches{fm}, 1
		}
		res.skip(root, skip)
	}
	return Result{Output: q.format(env, res)}, nil
}

// grepQuery is a compiled search.
type grepQuery struct {
	re       *regexp.Regexp
	lit      []byte // a literal every match contains; nil if none is known
	find     literalFinder
	litOnly  bool     // the pattern is exactly lit: the finder decides alone
	exotic   [][]byte // non-ASCII forms of lit's letters the finder cannot see
	skim     *skimmer // nil without lit
	include  func(rel string) bool
	exclude  func(rel string) bool
	mode     string
	context  int
	max      int
	keepEach int // matched lines kept per file
}

func newGrepQuery(in grepInput) (*grepQuery, string) {
	q := &grepQuery{mode: in.Mode, context: min(max(in.Context, 0), maxGrepContext), max: in.MaxResults}
	switch q.mode {
	case "":
		q.mode = "files"
	case "files", "lines", "counts":
	default:
		return nil, fmt.Sprintf("mode %q is not files, lines or counts", in.Mode)
	}
	if q.max <= 0 {
		q.max = defaultGrepResults
	}
	q.max = min(q.max, maxGrepResults)
	q.keepEach = q.max
	expr := "(?m)" + in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Sprintf("invalid regular expression: %v", err)
	}
	q.re = re
	var fold bool
	q.lit, fold, q.litOnly = requiredLiteral(in.Pattern, in.IgnoreCase)
	if q.lit != nil {
		q.find = newLiteralFinder(q.lit, fold)
		if fold {
			q.exotic = exoticFolds(q.lit)
		}
		q.skim = &skimmer{find: q.find, exotic: q.exotic, keep: max(len(q.lit), 3) - 1}
	}
	for _, g := range []struct {
		glob string
		dst  *func(string) bool
	}{{in.Include, &q.include}, {in.Exclude, &q.exclude}} {
		if g.glob == "" {
			continue
		}
		if !doublestar.ValidatePattern(strings.TrimPrefix(g.glob, "./")) {
			return nil, fmt.Sprintf("invalid glob %q", g.glob)
		}
		*g.dst = newPathMatcher(g.glob)
	}
	if q.exclude != nil && !strings.Contains(in.Exclude, "/") {
		// A bare name excludes directories of that name too.
		match := q.exclude
		q.exclude = func(rel string) bool {
			for {
				if match(rel) {
					return true
				}
				i := strings.LastIndexByte(rel, '/')
				if i < 0 {
					return false
				}
				rel = rel[:i]
			}
		}
	}
	return q, ""
}

type grepLine struct {
	n     int
	text  []byte
	match bool
}

type fileMatches struct {
	path  string
	count int        // matching lines
	lines []grepLine // lines mode: matches and context, in order
}

type grepResults struct {
	files []fileMatches
	total int  // files with matches, including dropped ones
	early bool // the walk stopped before the end
	// skipped counts the files not searched, by reason; examples keeps the
	// first few paths of each.
	skipped  map[string]int
	examples map[string][]string
}

// Why grep skips a file.
const (
	skipNone       = ""
	skipTooLarge   = "too large"
	skipBinary     = "binary"
	skipNotRegular = "not a regular file"
	skipUnreadable = "unreadable"
)

func (r *grepResults) skip(path, why string) {
	if why == skipNone {
		return
	}
	if r.skipped == nil {
		r.skipped, r.examples = map[string]int{}, map[string][]string{}
	}
	r.skipped[why]++
	if len(r.examples[why]) < 3 {
		r.examples[why] = append(r.examples[why], path)
	}
}

// searchTree searches every file below root in parallel.
func (q *grepQuery) searchTree(ctx context.Context, root string) (grepResults, error) {
	var mu sync.Mutex
	var res grepResults
	stopAt := 4 * q.max // files kept before the walk stops; sorted and cut afterwards
	lines := 0
	var bufs grepBuffers
	err := walkTree(ctx, root, walkOptions{ignore: true}, func(path, rel string, d fs.DirEntry) bool {
		if !d.Type().IsRegular() {
			if special(d.Type()) && (q.include == nil || q.include(rel)) {
				mu.Lock()
				res.skip(path, skipNotRegular)
				mu.Unlock()
			}
			return true
		}
		if q.include != nil && !q.include(rel) || q.exclude != nil && q.exclude(rel) {
			return true
		}
		buf := bufs.get()
		fm, why := q.searchFile(path, entryDirRef(d), buf)
		bufs.put(buf)
		if fm.count == 0 {
			if why != skipNone && why != skipBinary {
				mu.Lock()
				res.skip(path, why)
				mu.Unlock()
			}
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		res.total++
		res.files = append(res.files, fm)
		lines += len(fm.lines)
		if len(res.files) >= stopAt || (q.mode == "lines" && lines >= stopAt) {
			res.early = true
			return false
		}
		return true
	})
	if err != nil {
		return res, err
	}
	sort.Slice(res.files, func(i, j int) bool { return res.files[i].path < res.files[j].path })
	return res, nil
}

// grepBuffer is a reusable read buffer; file text it holds is copied out
// before reuse. b reads files and windows of larger ones; big holds a
// larger file whole.
type grepBuffer struct{ b, big []byte }

func newGrepBuffer() *grepBuffer { return &grepBuffer{b: make([]byte, grepWindow)} }

// grepWindow is the size of a read buffer: files up to it are read with
// one read, larger ones skimmed in windows of it.
const grepWindow = 64 << 10

// grepBuffers holds one search's idle read buffers. Unlike a sync.Pool it
// keeps them across garbage collections: a buffer grown for a large file
// serves the next ones, where a pool emptied by each collection made every
// large file allocate (and fault in) fresh memory, about a tenth of the CPU
// of a module-cache search.
type grepBuffers struct {
	mu   sync.Mutex
	free []*grepBuffer
}

func (p *grepBuffers) get() *grepBuffer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	return newGrepBuffer()
}

func (p *grepBuffers) put(b *grepBuffer) {
	p.mu.Lock()
	p.free = append(p.free, b)
	p.mu.Unlock()
}

// maxGrepFile is the largest file grep reads.
const maxGrepFile = 64 << 20

// searchFile reports the matches in one file (count 0: none), and why it
// was not searched when it was not.
func (q *grepQuery) searchFile(path string, at dirRef, buf *grepBuffer) (fileMatches, string) {
	data, why := buf.read(path, at, q.skim)
	if why != skipNone || len(data) == 0 {
		return fileMatches{}, why
	}
	if !isText(data[:min(len(data), 8192)]) {
		return fileMatches{}, skipBinary
	}
	useLit := q.lit != nil
	for _, x := range q.exotic {
		if bytes.Contains(data, x) {
			useLit = false // let the regexp fold K and ſ
		}
	}
	if useLit && q.find.index(data) < 0 {
		return fileMatches{}, skipNone
	}
	fm := fileMatches{path: path}
	wantLines := q.mode == "lines"
	lineNo, counted := 1, 0 // lineNo is the line number of data[counted]
	var matches []lineSpan
	q.eachMatchingLine(data, useLit, func(start, end int) bool {
		fm.count++
		if !wantLines {
			return q.mode == "counts"
		}
		lineNo += bytes.Count(data[counted:start], newline)
		counted = start
		matches = append(matches, lineSpan{n: lineNo, start: start, end: end})
		return len(matches) < q.keepEach
	})
	if fm.count == 0 {
		return fileMatches{}, skipNone
	}
	if wantLines {
		fm.lines = q.withContext(data, matches)
	}
	return fm, skipNone
}

var newline = []byte{'\n'}

// skimmer tells from a window of a large file whether the file needs a
// full search: it holds the required literal, or a non-ASCII letter that
// folds to one of the literal's (then the regexp searches the file). keep
// is how many bytes of a window the next one starts with, so that neither
// is missed across a window's edge.
type skimmer struct {
	find   literalFinder
	exotic [][]byte
	keep   int
}

func (s *skimmer) pass(window []byte) bool {
	if s.find.index(window) >= 0 {
		return true
	}
	for _, x := range s.exotic {
		if bytes.Contains(window, x) {
			return true
		}
	}
	return false
}

// lineSpan is a line of the file being searched: data[start:end], no newline.
type lineSpan struct{ n, start, end int }

// withContext interleaves context lines with matches and copies the text
// out of the shared buffer.
func (q *grepQuery) withContext(data []byte, matches []lineSpan) []grepLine {
	out := make([]grepLine, 0, len(matches)*(1+2*q.context))
	last := 0 // last line number emitted
	emit := func(l lineSpan, match bool) {
		text := bytes.TrimSuffix(data[l.start:l.end], []byte{'\r'})
		out = append(out, grepLine{n: l.n, text: append([]byte(nil), text...), match: match})
		last = l.n
	}
	for i, m := range matches {
		var before []lineSpan
		s := m.start
		for n := m.n - 1; n > last && n >= m.n-q.context && s > 0; n-- {
			e := s - 1
			s = lineStartAt(data, e)
			before = append(before, lineSpan{n: n, start: s, end: e})
		}
		for k := len(before) - 1; k >= 0; k-- {
			emit(before[k], false)
		}
		emit(m, true)
		next := int(^uint(0) >> 1)
		if i+1 < len(matches) {
			next = matches[i+1].n
		}
		e := m.end
		for n := m.n + 1; n <= m.n+q.context && n < next && e+1 < len(data); n++ {
			s := e + 1
			e = lineEndAt(data, s)
			emit(lineSpan{n: n, start: s, end: e}, false)
		}
	}
	return out
}

// format renders results for the model.
func (q *grepQuery) format(env *Env, res grepResults) string {
	if len(res.files) == 0 {
		if len(res.skipped) > 0 {
			return "No matches in the files searched." + skippedNote(env, res)
		}
		return "No matches."
	}
	return q.formatMatches(env, res) + skippedNote(env, res)
}

// skippedNote says which files were not searched and why, "" if none.
func skippedNote(env *Env, res grepResults) string {
	if len(res.skipped) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nNot searched:")
	for _, why := range []string{skipTooLarge, skipBinary, skipNotRegular, skipUnreadable} {
		n := res.skipped[why]
		if n == 0 {
			continue
		}
		names := make([]string, len(res.examples[why]))
		for i, p := range res.examples[why] {
			names[i] = displayPath(env, p)
		}
		more := ""
		if n > len(names) {
			more = fmt.Sprintf(" and %d more", n-len(names))
		}
		limit := ""
		if why == skipTooLarge {
			limit = fmt.Sprintf(", over %d MiB", maxGrepFile>>20)
		}
		fmt.Fprintf(&b, "\n- %d file(s) %s%s: %s%s", n, why, limit, strings.Join(names, ", "), more)
	}
	return b.String()
}

// formatMatches renders the matches.
func (q *grepQuery) formatMatches(env *Env, res grepResults) string {
	var b strings.Builder
	shown, omitted := 0, false
	switch q.mode {
	case "files", "counts":
		for _, fm := range res.files {
			if shown == q.max {
				omitted = true
				break
			}
			b.WriteString(displayPath(env, fm.path))
			if q.mode == "counts" {
				fmt.Fprintf(&b, ":%d", fm.count)
			}
			b.WriteByte('\n')
			shown++
		}
	case "lines":
	files:
		for _, fm := range res.files {
			name := displayPath(env, fm.path)
			prev := 0
			for _, l := range fm.lines {
				if shown == q.max {
					omitted = true
					break files
				}
				if q.context > 0 && prev != 0 && l.n != prev+1 {
					b.WriteString("--\n")
				}
				sep := "-"
				if l.match {
					sep = ":"
				}
				fmt.Fprintf(&b, "%s%s%d%s%s\n", name, sep, l.n, sep, shorten(string(l.text), maxGrepLineRunes))
				prev = l.n
				shown++
			}
		}
	}
	if omitted || res.early {
		if res.early {
			fmt.Fprintf(&b, "… (results cut at %d; more files match — narrow the pattern, path or include)\n", q.max)
		} else {
			fmt.Fprintf(&b, "… (results cut at %d of %d matching files — narrow the pattern, path or include)\n", q.max, res.total)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
