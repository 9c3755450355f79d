package tool

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// walkVisit is called for every entry below the walk root except ignored
// ones and .git; rel is slash-separated and relative to the root. It runs
// on several goroutines at once. Returning false stops the walk. While it
// runs, entryDirRef(d) may name d by its directory's open descriptor.
type walkVisit func(path, rel string, d fs.DirEntry) bool

// dirRef names a file by the descriptor of its directory and its name;
// fd -1: no descriptor, open the file by its path.
type dirRef struct {
	fd   int
	name string
}

var noDirRef = dirRef{fd: -1}

// walkTree visits root's tree in parallel, honouring .gitignore files (those
// above root up to the repository top as well) when ignore is set. It does
// not follow symbolic links. Directories are visited before their content.
func walkTree(ctx context.Context, root string, opt walkOptions, visit walkVisit) error {
	w := &walker{ctx: ctx, visit: visit, walkOptions: opt}
	w.cond = sync.NewCond(&w.mu)
	first := dirJob{path: root}
	if opt.ignore {
		first.gitRel, first.patterns = ancestorPatterns(ctx, root)
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
	rel      string // relative to the walk root, "" for the root
	gitRel   string // relative to the ignore root ("" for it), for gitignore matching
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
	entries, dirfd, err := readDirEntries(job.path)
	defer closeDirFD(dirfd) // after the visits: entries name files by it
	if err != nil && len(entries) == 0 {
		return
	}
	patterns := job.patterns
	dirPrefix := ""
	if job.gitRel != "" {
		dirPrefix = job.gitRel + "/"
	}
	if w.ignore {
		for _, e := range entries {
			if e.Name() == ".gitignore" && e.Type().IsRegular() {
				patterns = appendIgnoreFile(patterns, filepath.Join(job.path, ".gitignore"), dirPrefix)
				break
			}
		}
	}
	// Entries' paths are the directory's path and the name: what
	// filepath.Join gives, without cleaning the same directory's path for
	// each of its entries (the paths below the root are clean already).
	dirPath := job.path
	if job.depth == 0 {
		dirPath = filepath.Clean(dirPath)
	}
	if !strings.HasSuffix(dirPath, string(filepath.Separator)) {
		dirPath += string(filepath.Separator)
	}
	var subdirs []dirJob
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		isDir := e.IsDir()
		if len(patterns) > 0 && lastMatch(patterns, dirPrefix, name, isDir) {
			continue
		}
		path := dirPath + name
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
				sub.gitRel = dirPrefix + name
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

// ancestorPatterns finds the repository holding root (the nearest ancestor
// with a .git entry) and loads its global ignore file (core.excludesFile),
// its info/exclude and the .gitignore files
// from the repository top down to root's parent. It returns root's path
// relative to that top ("" when root is the top). Without a repository root
// itself is the top and only ignore files below it count.
func ancestorPatterns(ctx context.Context, root string) (string, []ignoreRule) {
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
	if top == "" {
		return "", nil
	}
	// git's precedence, lowest first: core.excludesFile, info/exclude,
	// then each .gitignore from the top down (lastMatch: the last match wins).
	common := gitCommonDir(top)
	var ps []ignoreRule
	if f := excludesFile(ctx, top); f != "" {
		ps = appendIgnoreFile(ps, f, "")
	}
	ps = appendIgnoreFile(ps, filepath.Join(common, "info", "exclude"), "")
	if top == root {
		return "", ps
	}
	rel, err := filepath.Rel(top, root)
	if err != nil {
		return "", nil
	}
	comps := strings.Split(filepath.ToSlash(rel), "/")
	dir, prefix := top, ""
	for _, c := range comps {
		// Like git, and like readDir, read no .gitignore that is a
		// symbolic link.
		if fi, err := os.Lstat(filepath.Join(dir, ".gitignore")); err == nil && fi.Mode().IsRegular() {
			ps = appendIgnoreFile(ps, filepath.Join(dir, ".gitignore"), prefix)
		}
		if lastMatch(ps, prefix, c, true) {
			// root is inside an ignored directory; searching it
			// explicitly still works, as with git's pathspecs.
			ps = nil
		}
		dir, prefix = filepath.Join(dir, c), prefix+c+"/"
	}
	return strings.TrimSuffix(prefix, "/"), ps
}

// gitCommonDir returns the directory holding the repository's info/exclude:
// top/.git, or for a linked worktree (.git is a file "gitdir: <dir>") the
// common directory that <dir>/commondir names.
func gitCommonDir(top string) string {
	dotGit := filepath.Join(top, ".git")
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return dotGit // a directory, or unreadable
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return dotGit
	}
	gitDir = strings.TrimSpace(gitDir)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(top, gitDir)
	}
	common, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(common))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return c
}
