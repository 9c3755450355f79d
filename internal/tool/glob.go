package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

//go:embed glob.md
var globDescription string

// maxGlobResults caps glob output.
const maxGlobResults = 500

// Glob finds files by pattern.
type Glob struct{}

type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

func (Glob) Name() string        { return "glob" }
func (Glob) Description() string { return globDescription }
func (Glob) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Glob pattern, e.g. **/*.go"},` +
		`"path":{"type":"string","description":"Directory to search (default: the working directory)"}},` +
		`"required":["pattern"]}`)
}

func (Glob) Describe(env *Env, raw json.RawMessage) Preview {
	var in globInput
	looseDecode(raw, &in)
	p := env.Resolve(in.Path)
	title := "Find " + quoteCommand(in.Pattern)
	if in.Path != "" {
		title += " in " + displayDir(env, p)
	}
	return Preview{Kind: KindSearch, Title: title, Access: AccessRead, Paths: []string{p}}
}

func (Glob) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in globInput
	if r := decodeInput("glob", call.Input, &in); r != nil {
		return *r, nil
	}
	if in.Pattern == "" {
		return ErrorResult(`glob needs a "pattern"`), nil
	}
	if !doublestar.ValidatePattern(in.Pattern) {
		return ErrorResult(fmt.Sprintf("invalid glob pattern %q", in.Pattern)), nil
	}
	p := env.Resolve(in.Path)
	if st, err := os.Stat(p); err != nil {
		return fsFailure(ctx, "search", p, err)
	} else if !st.IsDir() {
		return ErrorResult(fmt.Sprintf("%s is not a directory", p)), nil
	}
	match := newPathMatcher(in.Pattern)
	var mu sync.Mutex
	var found []string
	total := 0
	err := walkTree(ctx, p, walkOptions{ignore: true}, func(path, rel string, d fs.DirEntry) bool {
		if d.IsDir() || !match(rel) {
			return true
		}
		mu.Lock()
		total++
		if len(found) < maxGlobResults*4 {
			found = append(found, path)
		}
		mu.Unlock()
		return true
	})
	if err != nil {
		return Result{}, err
	}
	if len(found) == 0 {
		return Result{Output: fmt.Sprintf("No files match %q in %s.", in.Pattern, p)}, nil
	}
	sort.Strings(found)
	if len(found) > maxGlobResults {
		found = found[:maxGlobResults]
	}
	out := strings.Join(found, "\n")
	if total > len(found) {
		out += fmt.Sprintf("\n… (%d of %d files shown; narrow the pattern or path)", len(found), total)
	}
	return Result{Output: out}, nil
}

// newPathMatcher matches slash-separated relative paths against a glob; a
// pattern without a slash matches the base name, as in .gitignore and
// ripgrep's -g.
func newPathMatcher(pattern string) func(rel string) bool {
	pattern = strings.TrimPrefix(pattern, "./")
	if !strings.Contains(pattern, "/") {
		return func(rel string) bool {
			base := rel[strings.LastIndexByte(rel, '/')+1:]
			ok, _ := doublestar.Match(pattern, base)
			return ok
		}
	}
	return func(rel string) bool {
		ok, _ := doublestar.Match(pattern, rel)
		return ok
	}
}
