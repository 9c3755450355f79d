package tool

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// walkVisit is called for every entry below the walk root except ignored
// ones and .git; rel is slash-separated and relative to the root. It runs
// on several goroutines at once. Returning false stops the walk.
type walkVisit func(path, rel string, d fs.DirEntry) bool

// walkTree visits root's tree in parallel, honouring .gitignore files (those
// above root up to the repository top as well) when ignore is set. It does
// not follow symbolic links. Directories are visited before their content.
func walkTree(ctx context.Context, root string, opt walkOptions, visit walkVisit) error {
	w := &walker{ctx: ctx, visit: visit, walkOptions: opt}
	w.cond = sync.NewCond(&w.mu)
	first := dirJob{path: root}
	if opt.ignore {
		first.comps, first.patterns = ancestorPatterns(root)
	}
	w.stack = []dirJob{first}
	workers := runtime.GOMAXPROCS(0) + 2
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.work() }()
	}
	wg.Wait()
	return ctx.Err()
}

type walkOptions struct {
	ignore   bool // honour .gitignore
	maxDepth int  // 0: unlimited; 1: root's entries only
}

type dirJob struct {
	depth    int // 0 for the root
	path     string
	rel      string   // relative to the walk root, "" for the root
	comps    []string // relative to the ignore root, for gitignore matching
	patterns []ignoreRule
}

type walker struct {
	ctx   context.Context
	visit walkVisit
	walkOptions
	stop atomic.Bool

	mu     sync.Mutex
	cond   *sync.Cond
	stack  []dirJob
	active int
	done   bool
}

func (w *walker) work() {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && !w.done {
			if w.active == 0 {
				w.done = true
				w.cond.Broadcast()
				break
			}
			w.cond.Wait()
		}
		if w.done {
			w.mu.Unlock()
			return
		}
		job := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.active++
		w.mu.Unlock()

		w.readDir(job)

		w.mu.Lock()
		w.active--
		if w.active == 0 && len(w.stack) == 0 {
			w.done = true
			w.cond.Broadcast()
		}
		w.mu.Unlock()
	}
}

func (w *walker) halted() bool {
	if w.stop.Load() {
		return true
	}
	if w.ctx.Err() != nil {
		w.stop.Store(true)
		return true
	}
	return false
}

func (w *walker) readDir(job dirJob) {
	if w.halted() {
		return
	}
	entries, err := readDirEntries(job.path)
	if err != nil && len(entries) == 0 {
		return
	}
	patterns := job.patterns
	if w.ignore {
		for _, e := range entries {
			if e.Name() == ".gitignore" && e.Type().IsRegular() {
				patterns = appendIgnoreFile(patterns, filepath.Join(job.path, ".gitignore"), job.comps)
				break
			}
		}
	}
	var comps []string
	var above []bool
	if len(patterns) > 0 {
		comps = make([]string, len(job.comps)+1)
		copy(comps, job.comps)
		above = matchAbove(patterns, job.comps)
	}
	var subdirs []dirJob
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		isDir := e.IsDir()
		if len(patterns) > 0 {
			comps[len(comps)-1] = name
			if ignoredIn(patterns, above, comps, isDir) {
				continue
			}
		}
		path := filepath.Join(job.path, name)
		rel := name
		if job.rel != "" {
			rel = job.rel + "/" + name
		}
		if !w.visit(path, rel, e) {
			w.stop.Store(true)
			return
		}
		if isDir && (w.maxDepth == 0 || job.depth+1 < w.maxDepth) {
			sub := dirJob{depth: job.depth + 1, path: path, rel: rel, patterns: patterns}
			if w.ignore {
				sub.comps = append(job.comps[:len(job.comps):len(job.comps)], name)
			}
			subdirs = append(subdirs, sub)
		}
	}
	if len(subdirs) > 0 {
		w.mu.Lock()
		w.stack = append(w.stack, subdirs...)
		w.cond.Broadcast()
		w.mu.Unlock()
	}
}

// ignoreRule is one gitignore pattern. Most patterns are a bare name
// glob ("*.log", "node_modules/"): git matches those against every
// component of a path below their directory, so for the entries of one
// directory the answer for the components above the entry is the same
// for all of them (matchAbove works it out once per directory) and only
// the entry's own name is left to match. Other patterns go to go-git.
type ignoreRule struct {
	pat       gitignore.Pattern
	simple    bool   // a name glob, matched here; else pat.Match decides
	name      string // the glob, for a simple rule
	kind      int    // how name matches: nameLiteral, nameSuffix or nameGlob
	dirOnly   bool
	include   bool
	domainLen int // components of the directory holding the rule
}

const (
	nameGlob = iota
	nameLiteral
	nameSuffix // "*" and a literal
)

// newIgnoreRule parses one line of an ignore file found in domain, the
// way gitignore.ParsePattern does.
func newIgnoreRule(line string, domain []string) ignoreRule {
	r := ignoreRule{pat: gitignore.ParsePattern(line, domain), domainLen: len(domain)}
	p := line
	if strings.HasPrefix(p, "!") {
		r.include = true
		p = p[1:]
	}
	if !strings.HasSuffix(p, "\\ ") {
		p = strings.TrimRight(p, " ")
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly = true
		p = p[:len(p)-1]
	}
	if strings.Contains(p, "/") {
		return r
	}
	if _, err := filepath.Match(p, ""); err != nil {
		return r // malformed: leave the error handling to go-git
	}
	r.simple, r.name = true, p
	switch {
	case !strings.ContainsAny(p, "*?[\\"):
		r.kind = nameLiteral
	case strings.HasPrefix(p, "*") && !strings.ContainsAny(p[1:], "*?[\\"):
		r.kind, r.name = nameSuffix, p[1:]
	}
	return r
}

// matchName reports whether a simple rule's glob matches one name.
func (r *ignoreRule) matchName(name string) bool {
	switch r.kind {
	case nameLiteral:
		return name == r.name
	case nameSuffix:
		return strings.HasSuffix(name, r.name)
	}
	ok, _ := filepath.Match(r.name, name)
	return ok
}

// matchAbove reports, for each simple rule, whether it matches one of the
// directory's own components below the rule's directory: then it matches
// every entry of the directory.
func matchAbove(rules []ignoreRule, dirComps []string) []bool {
	above := make([]bool, len(rules))
	for i := range rules {
		r := &rules[i]
		if !r.simple || r.domainLen > len(dirComps) {
			continue
		}
		for _, c := range dirComps[r.domainLen:] {
			if r.matchName(c) {
				above[i] = true
				break
			}
		}
	}
	return above
}

// ignoredIn applies gitignore precedence to an entry (comps: its path
// from the ignore root) of the directory that above was computed for: the
// last matching rule wins.
func ignoredIn(rules []ignoreRule, above []bool, comps []string, isDir bool) bool {
	name := comps[len(comps)-1]
	for i := len(rules) - 1; i >= 0; i-- {
		r := &rules[i]
		var m gitignore.MatchResult
		switch {
		case !r.simple:
			m = r.pat.Match(comps, isDir)
		case r.domainLen >= len(comps):
		case above[i] || r.matchName(name) && (!r.dirOnly || isDir):
			m = gitignore.Exclude
			if r.include {
				m = gitignore.Include
			}
		}
		switch m {
		case gitignore.Exclude:
			return true
		case gitignore.Include:
			return false
		}
	}
	return false
}

// ignored applies gitignore precedence to a path: the last matching rule
// wins.
func ignored(rules []ignoreRule, comps []string, isDir bool) bool {
	return ignoredIn(rules, matchAbove(rules, comps[:len(comps)-1]), comps, isDir)
}

// appendIgnoreFile returns ps plus the patterns of the file, copying ps so
// that sibling directories never share a grown slice.
func appendIgnoreFile(ps []ignoreRule, file string, domain []string) []ignoreRule {
	f, err := os.Open(file)
	if err != nil {
		return ps
	}
	defer f.Close()
	out := ps[:len(ps):len(ps)]
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, newIgnoreRule(line, domain))
	}
	return out
}

// ancestorPatterns finds the repository holding root (the nearest ancestor
// with a .git entry) and loads .git/info/exclude and the .gitignore files
// from the repository top down to root's parent. It returns root's path
// components relative to that top. Without a repository root itself is the
// top and only ignore files below it count.
func ancestorPatterns(root string) ([]string, []ignoreRule) {
	top := ""
	for d := root; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if top == "" || top == root {
		var ps []ignoreRule
		if top != "" {
			ps = appendIgnoreFile(nil, filepath.Join(top, ".git", "info", "exclude"), nil)
		}
		return nil, ps
	}
	rel, err := filepath.Rel(top, root)
	if err != nil {
		return nil, nil
	}
	comps := strings.Split(filepath.ToSlash(rel), "/")
	ps := appendIgnoreFile(nil, filepath.Join(top, ".git", "info", "exclude"), nil)
	dir := top
	for i := range comps {
		ps = appendIgnoreFile(ps, filepath.Join(dir, ".gitignore"), comps[:i])
		dir = filepath.Join(dir, comps[i])
		if ignored(ps, comps[:i+1], true) {
			// root itself is ignored; searching it explicitly still works,
			// as with git's pathspecs.
			ps = nil
		}
	}
	return comps, ps
}
